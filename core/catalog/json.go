package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// Arguments and results cross the catalog as JSON text: a tool's input is
// decoded by encoding/json from the caller's bytes after the validator
// admitted them, and its output is encoded by encoding/json, so field
// names, omitempty, omitzero, the string option and Marshaler types behave
// as encoding/json documents. What is added here is the one promise
// encoding/json does not make: a nil slice or map is sent as [] or {}
// where the output schema says an array or an object (as JSON Schema
// readers expect), not as null.

// decodeInput decodes raw (a validated arguments object) into dst. The
// validator ran first against the schema derived from dst's type, so a
// failure here is a value the type cannot hold (an integer beyond its
// range): the caller learns which argument, never the value.
// numbers is holdsAny(in), known once per tool.
func decodeInput(raw []byte, dst any, in *Schema, numbers bool) error {
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	var err error
	if numbers {
		dec := json.NewDecoder(bytes.NewReader(raw))
		// Numbers in values typed any keep their text (a 64-bit id stays
		// exact), as the validator saw them.
		dec.UseNumber()
		err = dec.Decode(dst)
	} else {
		err = json.Unmarshal(raw, dst)
	}
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// Field is the path of JSON names; its first element is a declared
		// property (the validator refused any other), later ones may be
		// caller-chosen map keys, so only the first is named.
		name, _, _ := strings.Cut(te.Field, ".")
		if _, declared := in.Properties[name]; declared && name != "" {
			return Invalid("Argument '%s' is out of range for its type.", name)
		}
	}
	return Invalid("Arguments do not fit the tool's input type.")
}

// holdsAny reports whether s has a value of any type somewhere (a Go
// value typed any), where decoding must keep numbers as json.Number.
func holdsAny(s *Schema) bool {
	if s == nil {
		return false
	}
	if s.Type == "" {
		return true
	}
	for _, p := range s.Properties {
		if holdsAny(p) {
			return true
		}
	}
	return holdsAny(s.Items) || holdsAny(s.Additional)
}

// encodeOutput encodes a tool's output value and gives nil slices and maps
// the empty form out promises (see above).
func encodeOutput(v any, out *Schema) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	w := jsonWalk{doc: b}
	if err := w.value(out, ""); err != nil {
		return nil, err
	}
	return w.result(), nil
}

// EachString calls fn with every string in doc (a compact JSON text as
// encoding/json writes it, such as Result.JSON): object keys with an empty
// key, and each string value with the name of the property it is under
// (the nearest enclosing one, through arrays). The guard chain reads a
// result's flow labels this way.
func EachString(doc json.RawMessage, fn func(key, s string)) error {
	w := jsonWalk{doc: doc, each: fn}
	return w.value(nil, "")
}

// RewriteStrings returns doc (as for EachString) with each string value
// replaced by fn's answer where fn says so; keys are left as they are. doc
// itself is returned when nothing changes. The guard chain redacts a
// result's secrets this way.
func RewriteStrings(doc json.RawMessage, fn func(s string) (string, bool)) (json.RawMessage, error) {
	w := jsonWalk{doc: doc, rewrite: fn}
	if err := w.value(nil, ""); err != nil {
		return nil, err
	}
	return w.result(), nil
}

var errBadJSON = errors.New("catalog: structured content is not compact JSON")

// jsonWalk reads one compact JSON text (encoding/json's output: no
// insignificant space), copying it on the first change. It makes a Go
// string of a key or value only for a caller that reads it.
type jsonWalk struct {
	doc []byte
	i   int
	// out holds doc[:last] with the changes so far; nil while unchanged.
	out  []byte
	last int
	// each sees every key and string value; rewrite may replace a value.
	each    func(key, s string)
	rewrite func(s string) (string, bool)
}

func (w *jsonWalk) replace(start, end int, with []byte) {
	w.out = append(w.out, w.doc[w.last:start]...)
	w.out = append(w.out, with...)
	w.last = end
}

func (w *jsonWalk) result() json.RawMessage {
	if w.out == nil {
		return w.doc
	}
	return append(w.out, w.doc[w.last:]...)
}

func (w *jsonWalk) next(c byte) bool {
	if w.i < len(w.doc) && w.doc[w.i] == c {
		w.i++
		return true
	}
	return false
}

// value reads one value described by s (nil: no schema) under key.
func (w *jsonWalk) value(s *Schema, key string) error {
	if w.i >= len(w.doc) {
		return errBadJSON
	}
	switch w.doc[w.i] {
	case '{':
		w.i++
		if w.next('}') {
			return nil
		}
		for {
			lit, escaped, err := w.literal()
			if err != nil || !w.next(':') {
				return errBadJSON
			}
			var k string
			if w.each != nil || escaped {
				if k, err = unquote(lit, escaped); err != nil {
					return err
				}
			}
			var sub *Schema
			if s != nil {
				name := k
				if !escaped {
					name = string(lit[1 : len(lit)-1]) // a lookup, not kept
				}
				if sub = s.Properties[name]; sub == nil {
					sub = s.Additional
				}
			}
			if w.each != nil {
				w.each("", k)
			}
			if err := w.value(sub, k); err != nil {
				return err
			}
			if w.next('}') {
				return nil
			}
			if !w.next(',') {
				return errBadJSON
			}
		}
	case '[':
		w.i++
		if w.next(']') {
			return nil
		}
		var items *Schema
		if s != nil {
			items = s.Items
		}
		for {
			if err := w.value(items, key); err != nil {
				return err
			}
			if w.next(']') {
				return nil
			}
			if !w.next(',') {
				return errBadJSON
			}
		}
	case '"':
		start := w.i
		lit, escaped, err := w.literal()
		if err != nil || (w.each == nil && w.rewrite == nil) {
			return err
		}
		v, err := unquote(lit, escaped)
		if err != nil {
			return err
		}
		if w.each != nil {
			w.each(key, v)
		}
		if w.rewrite != nil {
			if r, ok := w.rewrite(v); ok && r != v {
				q, err := json.Marshal(r)
				if err != nil {
					return err
				}
				w.replace(start, w.i, q)
			}
		}
		return nil
	case 'n':
		start := w.i
		if !bytes.HasPrefix(w.doc[start:], []byte("null")) {
			return errBadJSON
		}
		w.i += len("null")
		// encoding/json writes null for a nil slice, map, pointer or
		// interface; the first two are the empty array or object the
		// schema promises (a nil struct pointer stays null).
		if s != nil && !s.Nullable {
			switch {
			case s.Type == "array":
				w.replace(start, w.i, []byte("[]"))
			case s.Type == "object" && s.Additional != nil:
				w.replace(start, w.i, []byte("{}"))
			}
		}
		return nil
	}
	// A number, true or false runs to the next delimiter.
	start := w.i
	for w.i < len(w.doc) && !strings.ContainsRune(",]}", rune(w.doc[w.i])) {
		w.i++
	}
	if w.i == start {
		return errBadJSON
	}
	return nil
}

// literal reads a string literal, returning it with its quotes and
// whether it holds an escape.
func (w *jsonWalk) literal() (quoted []byte, escaped bool, err error) {
	start := w.i
	if !w.next('"') {
		return nil, false, errBadJSON
	}
	for w.i < len(w.doc) && w.doc[w.i] != '"' {
		if w.doc[w.i] == '\\' {
			escaped = true
			w.i++
		}
		w.i++
	}
	if !w.next('"') {
		return nil, false, errBadJSON
	}
	return w.doc[start:w.i], escaped, nil
}

// unquote is a literal's string value.
func unquote(quoted []byte, escaped bool) (string, error) {
	if !escaped {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", errBadJSON
	}
	return s, nil
}
