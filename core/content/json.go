package content

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"golang.org/x/text/unicode/norm"
)

// Defaults for JSONLimits, matching ARROWHEAD_CONTENT_MAX_BYTES,
// ARROWHEAD_JSON_MAX_DEPTH and ARROWHEAD_JSON_MAX_ELEMENTS.
const (
	DefaultJSONMaxBytes    = 1_000_000
	DefaultJSONMaxDepth    = 64
	DefaultJSONMaxElements = 100_000
)

// JSONLimits bounds what SanitizeJSON accepts. A field that is zero or
// negative takes its Default* value: there is no "unlimited".
type JSONLimits struct {
	// MaxBytes caps the input size.
	MaxBytes int
	// MaxDepth caps container nesting: a scalar has depth 0, [] has 1,
	// [[]] has 2.
	MaxDepth int
	// MaxElements caps the number of values of every kind (objects,
	// arrays, strings, numbers, booleans, nulls); object keys do not count.
	MaxElements int
}

func (l JSONLimits) withDefaults() JSONLimits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultJSONMaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultJSONMaxDepth
	}
	if l.MaxElements <= 0 {
		l.MaxElements = DefaultJSONMaxElements
	}
	return l
}

// Sentinel errors of SanitizeJSON. Their text is fixed and never includes
// any part of the document, so it is safe to show a caller.
var (
	ErrJSONTooLarge        = errors.New("JSON document exceeds the size limit")
	ErrJSONTooDeep         = errors.New("JSON document exceeds the nesting depth limit")
	ErrJSONTooManyElements = errors.New("JSON document exceeds the element count limit")
	ErrJSONDuplicateKey    = errors.New("JSON object has a duplicate key")
	ErrJSONNonFinite       = errors.New("JSON document contains NaN or Infinity")
	ErrJSONSyntax          = errors.New("JSON document is malformed")
	ErrJSONTrailingData    = errors.New("JSON document has data after its top-level value")
)

// JSONError is the error SanitizeJSON returns: one of the ErrJSON* sentinels
// and, where known, the byte offset it was detected at. Neither carries
// document content.
type JSONError struct {
	// Err is one of the ErrJSON* sentinels.
	Err error
	// Offset is the byte offset in the input near which the problem was
	// detected, or -1 when it applies to the whole document.
	Offset int64
}

func (e *JSONError) Error() string {
	if e.Offset < 0 {
		return e.Err.Error()
	}
	return e.Err.Error() + " (near byte " + strconv.FormatInt(e.Offset, 10) + ")"
}

func (e *JSONError) Unwrap() error { return e.Err }

func jsonErr(sentinel error, offset int64) error {
	return &JSONError{Err: sentinel, Offset: offset}
}

// SanitizeJSON validates untrusted JSON under lim and returns it
// re-serialized canonically.
//
// Checks run cheapest first. The size cap, then a byte scan that
// understands strings and escapes, measuring nesting depth and refusing bare
// NaN and Infinity, run before any parser sees the document, so a depth
// bomb never reaches one. Then a streaming token parse (encoding/json's
// Decoder.Token with UseNumber) counts elements, refuses duplicate keys at
// every level and anything encoding/json does not accept as standard JSON
// (comments, single quotes, trailing commas, leading zeros...), and refuses
// data after the top-level value. A leading UTF-8 byte-order mark is
// ignored (RFC 8259 section 8.1).
//
// The output is compact: no insignificant whitespace, object keys sorted by
// their UTF-8 bytes, numbers exactly as written (1.0, 1e400 and -0 are kept
// verbatim, never rounded through float64), strings re-escaped by
// encoding/json without HTML escaping. Every string, key or value, first
// passes the text sanitizer's control stripping and NFC normalization, so an
// escaped control, escape sequence or bidi override (\u001b, \u202e) cannot
// survive; carriage returns become \n. Two keys that differ only in what the
// sanitizer removes or normalizes count as duplicates. Invalid UTF-8 and lone
// surrogate escapes inside strings become U+FFFD.
//
// Errors are *JSONError values wrapping an ErrJSON* sentinel.
func SanitizeJSON(b []byte, lim JSONLimits) (string, error) {
	lim = lim.withDefaults()
	if len(b) > lim.MaxBytes {
		return "", jsonErr(ErrJSONTooLarge, -1)
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if err := prescanJSON(b, lim.MaxDepth); err != nil {
		return "", err
	}

	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	p := jsonParser{dec: dec, lim: lim}
	tok, err := dec.Token()
	if err != nil {
		return "", p.syntax(err)
	}
	v, err := p.value(tok, 0)
	if err != nil {
		return "", err
	}
	off := dec.InputOffset()
	if len(bytes.TrimLeft(b[off:], " \t\r\n")) > 0 {
		return "", jsonErr(ErrJSONTrailingData, off)
	}

	var out bytes.Buffer
	out.Grow(len(b))
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every value came from the decoder, so this cannot happen; report it
		// without the encoder's text all the same.
		return "", jsonErr(ErrJSONSyntax, -1)
	}
	return string(bytes.TrimSuffix(out.Bytes(), []byte("\n"))), nil
}

// SanitizedObject decodes stored JSON (a memory's metadata, a timer's
// payload) for output, sanitized again on the way out: anything that does
// not sanitize to an object reads as an empty object.
func SanitizedObject(raw []byte) map[string]any {
	out := map[string]any{}
	if len(raw) == 0 {
		return out
	}
	clean, err := SanitizeJSON(raw, JSONLimits{})
	if err != nil || json.Unmarshal([]byte(clean), &out) != nil || out == nil {
		return map[string]any{}
	}
	return out
}

// prescanJSON measures nesting depth with a byte scan that tracks strings
// and escapes, and refuses the non-standard NaN and Infinity literals, so a
// deep or non-finite document never reaches a parser. It does not validate
// otherwise: malformed input is the parser's to refuse.
func prescanJSON(b []byte, maxDepth int) error {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			// Skip the string body: a backslash escapes the next byte.
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
			if depth > maxDepth {
				return jsonErr(ErrJSONTooDeep, int64(i))
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case 'N':
			if bytes.HasPrefix(b[i:], []byte("NaN")) {
				return jsonErr(ErrJSONNonFinite, int64(i))
			}
		case 'I':
			if bytes.HasPrefix(b[i:], []byte("Infinity")) {
				return jsonErr(ErrJSONNonFinite, int64(i))
			}
		}
	}
	return nil
}

// jsonParser builds a tree of map[string]any, []any, string, json.Number,
// bool and nil from the decoder's token stream.
type jsonParser struct {
	dec      *json.Decoder
	lim      JSONLimits
	elements int
}

// syntax maps a decoder error to ErrJSONSyntax. The decoder's own text
// quotes the offending character, so it is never passed on.
func (p *jsonParser) syntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return jsonErr(ErrJSONSyntax, se.Offset)
	}
	return jsonErr(ErrJSONSyntax, p.dec.InputOffset())
}

func (p *jsonParser) value(tok json.Token, depth int) (any, error) {
	p.elements++
	if p.elements > p.lim.MaxElements {
		return nil, jsonErr(ErrJSONTooManyElements, p.dec.InputOffset())
	}
	switch t := tok.(type) {
	case json.Delim:
		// The pre-scan already bounds depth; this check keeps the recursion
		// bounded even if the two ever disagreed.
		if depth+1 > p.lim.MaxDepth {
			return nil, jsonErr(ErrJSONTooDeep, p.dec.InputOffset())
		}
		switch t {
		case '{':
			return p.object(depth + 1)
		case '[':
			return p.array(depth + 1)
		}
		// A closing delimiter where a value belongs: the decoder refuses
		// this itself, so it is unreachable in practice.
		return nil, jsonErr(ErrJSONSyntax, p.dec.InputOffset())
	case string:
		return sanitizeJSONString(t), nil
	case json.Number, bool, nil:
		return t, nil
	}
	return nil, jsonErr(ErrJSONSyntax, p.dec.InputOffset())
}

func (p *jsonParser) object(depth int) (any, error) {
	obj := make(map[string]any)
	for {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.syntax(err)
		}
		if d, ok := tok.(json.Delim); ok && d == '}' {
			return obj, nil
		}
		raw, ok := tok.(string)
		if !ok {
			return nil, jsonErr(ErrJSONSyntax, p.dec.InputOffset())
		}
		key := sanitizeJSONString(raw)
		if _, dup := obj[key]; dup {
			return nil, jsonErr(ErrJSONDuplicateKey, p.dec.InputOffset())
		}
		tok, err = p.dec.Token()
		if err != nil {
			return nil, p.syntax(err)
		}
		v, err := p.value(tok, depth)
		if err != nil {
			return nil, err
		}
		obj[key] = v
	}
}

func (p *jsonParser) array(depth int) (any, error) {
	arr := []any{}
	for {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.syntax(err)
		}
		if d, ok := tok.(json.Delim); ok && d == ']' {
			return arr, nil
		}
		v, err := p.value(tok, depth)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
}

// sanitizeJSONString applies the text sanitizer's control stripping and NFC
// to a decoded string. Unlike SanitizeText it does not refuse a UTF-7 mark:
// a string value that starts with "+/v8" is data, not an encoding signal.
func sanitizeJSONString(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return norm.NFC.String(stripControls([]byte(s)))
		}
	}
	return s
}
