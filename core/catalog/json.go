package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
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
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
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
	return s != nil && (s.Type == "" || holdsAny(s.Items) || holdsAny(s.Additional) ||
		slices.ContainsFunc(slices.Collect(maps.Values(s.Properties)), holdsAny))
}

// encodeOutput encodes a tool's output value as promised above.
func encodeOutput(v any, out *Schema) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return walk(b, out, nil, nil)
}

// EachString calls fn with every string in doc (a compact JSON text as
// encoding/json writes it, such as Result.JSON): object keys with an empty
// key, and each string value with the name of the property it is under
// (the nearest enclosing one, through arrays). The guard chain reads a
// result's flow labels this way.
func EachString(doc json.RawMessage, fn func(key, s string)) error {
	_, err := walk(doc, nil, fn, nil)
	return err
}

// RewriteStrings returns doc (as for EachString) with each string value
// replaced by fn's answer where fn says so; keys are left as they are. doc
// itself is returned when nothing changes. The guard chain redacts a
// result's secrets this way.
func RewriteStrings(doc json.RawMessage, fn func(s string) (string, bool)) (json.RawMessage, error) {
	return walk(doc, nil, nil, fn)
}

var errBadJSON = errors.New("catalog: structured content is not compact JSON")

// walk reads doc, one compact JSON text (encoding/json's output: no
// insignificant space), in one pass, copying it on the first change: a
// null where s (nil: no schema) says an array or a map becomes [] or {},
// and rewrite may replace a string value. each sees every key (under key
// "") and string value (under its property). A Go string is made of a key
// or value only for a callback that reads it or an escaped key's lookup.
func walk(doc []byte, s *Schema, each func(key, s string), rewrite func(string) (string, bool)) (json.RawMessage, error) {
	type open struct {
		s   *Schema // the object's or array's
		key string  // the property it is under
		end byte
	}
	// The open containers, on the goroutine's stack while nesting is shallow.
	stack := make([]open, 0, 8)
	var out []byte // doc[:last] with the changes so far; nil while unchanged
	i, last, key := 0, 0, ""
	replace := func(start int, with []byte) {
		out = append(append(out, doc[last:start]...), with...)
		last = i
	}
	// literal reads the string literal at i: its text with the quotes,
	// and whether it holds an escape.
	literal := func() (lit []byte, escaped bool, err error) {
		start := i
		if i >= len(doc) || doc[i] != '"' {
			return nil, false, errBadJSON
		}
		for i++; i < len(doc) && doc[i] != '"'; i++ {
			if doc[i] == '\\' {
				escaped, i = true, i+1
			}
		}
		if i++; i > len(doc) {
			return nil, false, errBadJSON
		}
		return doc[start:i], escaped, nil
	}
	for {
		if len(stack) > 0 {
			// Past the bracket or comma at i: the next member of the
			// innermost object or array, its schema and its property.
			i++
			top := stack[len(stack)-1]
			s, key = nil, top.key
			if top.end == ']' && top.s != nil {
				s = top.s.Items
			} else if top.end == '}' {
				lit, escaped, err := literal()
				var k string
				if err == nil && (each != nil || escaped) {
					k, err = unquote(lit, escaped)
				}
				if err != nil || i >= len(doc) || doc[i] != ':' {
					return nil, errBadJSON
				}
				i++
				name := lit[1 : len(lit)-1]
				if escaped {
					name = []byte(k)
				}
				if top.s != nil {
					if s = top.s.Properties[string(name)]; s == nil {
						s = top.s.Additional
					}
				}
				if each != nil {
					each("", k)
					key = k
				}
			}
		}
		if i >= len(doc) {
			return nil, errBadJSON
		}
		switch start, c := i, doc[i]; c {
		case '{', '[':
			if i+1 < len(doc) && doc[i+1] == c+2 { // '}' is '{'+2, ']' is '['+2
				i += 2
				break
			}
			stack = append(stack, open{s, key, c + 2})
			continue
		case '"':
			lit, escaped, err := literal()
			var v string
			if err == nil && (each != nil || rewrite != nil) {
				v, err = unquote(lit, escaped)
			}
			if err != nil {
				return nil, err
			}
			if each != nil {
				each(key, v)
			}
			if rewrite != nil {
				if r, ok := rewrite(v); ok && r != v {
					q, _ := json.Marshal(r) // a string always encodes
					replace(start, q)
				}
			}
		case 'n':
			if !bytes.HasPrefix(doc[i:], []byte("null")) {
				return nil, errBadJSON
			}
			i += len("null")
			// encoding/json writes null for a nil slice, map, pointer or
			// interface; the first two are the empty array or object the
			// schema promises (a nil struct pointer stays null).
			if s != nil && !s.Nullable && s.Type == "array" {
				replace(start, []byte("[]"))
			} else if s != nil && !s.Nullable && s.Type == "object" && s.Additional != nil {
				replace(start, []byte("{}"))
			}
		default: // a number, true or false runs to the next delimiter
			for i < len(doc) && !strings.ContainsRune(",]}", rune(doc[i])) {
				i++
			}
			if i == start {
				return nil, errBadJSON
			}
		}
		// After a value: the ends of the objects and arrays it closes, then
		// a comma before the next member, or the end of the text.
		for len(stack) > 0 && i < len(doc) && doc[i] == stack[len(stack)-1].end {
			i++
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			if out == nil {
				return doc, nil
			}
			return append(out, doc[last:]...), nil
		}
		if i >= len(doc) || doc[i] != ',' {
			return nil, errBadJSON
		}
	}
}

// unquote is a string literal's value.
func unquote(lit []byte, escaped bool) (string, error) {
	if !escaped {
		return string(lit[1 : len(lit)-1]), nil
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return "", errBadJSON
	}
	return s, nil
}
