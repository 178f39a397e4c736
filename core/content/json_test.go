package content

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitizeJSONCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"sorted keys, compact", `{ "b": 1, "a": [true, false, null], "c": {"z": "", "y": {}} }`, `{"a":[true,false,null],"b":1,"c":{"y":{},"z":""}}`},
		{"numbers as written", `[1.0, 1e400, -0, 12345678901234567890123, 1.50E-7, 0.1]`, `[1.0,1e400,-0,12345678901234567890123,1.50E-7,0.1]`},
		{"no HTML escaping", `{"html":"<a href=\"x\">&</a>"}`, `{"html":"<a href=\"x\">&</a>"}`},
		{"unicode kept, escapes decoded", `["caf\u00e9", "日本", "\ud83d\ude00"]`, `["café","日本","😀"]`},
		{"keys sorted by bytes", `{"é":1,"z":2,"A":3,"a":4}`, `{"A":3,"a":4,"z":2,"é":1}`},
		{"top-level scalar", ` "x" `, `"x"`},
		{"top-level number", "42\n", `42`},
		{"empty containers", `{"a":[],"b":{}}`, `{"a":[],"b":{}}`},
		{"utf-8 BOM ignored", "\xef\xbb\xbf{\"a\":1}", `{"a":1}`},
		{"escape sequence stripped", `{"k":"\u001b[31mred\u001b[0m"}`, `{"k":"red"}`},
		{"bidi override stripped", `{"k":"abc\u202edef"}`, `{"k":"abcdef"}`},
		{"zero width stripped", `["a\u200bb\ufeffc"]`, `["abc"]`},
		{"C0 and C1 controls stripped", `["a\u0000b\u0007c\u0085d"]`, `["abcd"]`},
		{"newline and tab kept", `["a\nb\tc"]`, `["a\nb\tc"]`},
		{"carriage return becomes newline", `["a\r\nb\rc"]`, `["a\nb\nc"]`},
		{"OSC hyperlink stripped", `["\u001b]8;;https://evil\u0007click\u001b]8;;\u0007"]`, `["click"]`},
		{"key sanitized", `{"a\u202eb":1}`, `{"ab":1}`},
		{"NFC applied", `["e\u0301"]`, `["é"]`},
		{"lone surrogate replaced", `["\ud800x"]`, `["` + "\ufffd" + `x"]`},
		{"invalid UTF-8 in string replaced", "[\"a\xffb\"]", `["a` + "\ufffd" + `b"]`},
		{"UTF-7 mark inside a string is data", `["+/v8-"]`, `["+/v8-"]`},
		{"NaN inside a string is data", `{"NaN":"Infinity"}`, `{"NaN":"Infinity"}`},
		{"brackets inside strings", `{"k":"[[[[{{{{\"]]"}`, `{"k":"[[[[{{{{\"]]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SanitizeJSON([]byte(tt.in), JSONLimits{MaxDepth: 3})
			if err != nil {
				t.Fatalf("SanitizeJSON: %v", err)
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			again, err := SanitizeJSON([]byte(got), JSONLimits{MaxDepth: 3})
			if err != nil || again != got {
				t.Errorf("not idempotent: %q, %v", again, err)
			}
		})
	}
}

func TestSanitizeJSONRefusals(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name string
		in   string
		lim  JSONLimits
		want error
	}{
		{"too large", `{"a":"0123456789"}`, JSONLimits{MaxBytes: 10}, ErrJSONTooLarge},
		{"too deep", deep(4), JSONLimits{MaxDepth: 3}, ErrJSONTooDeep},
		{"too deep objects", `{"a":{"b":{"c":{"d":1}}}}`, JSONLimits{MaxDepth: 3}, ErrJSONTooDeep},
		{"too deep default", deep(DefaultJSONMaxDepth + 1), JSONLimits{}, ErrJSONTooDeep},
		// A depth bomb that is also malformed is refused as too deep: the
		// pre-scan runs before any parser sees it.
		{"too deep before parsing", strings.Repeat("[", 100000) + "x", JSONLimits{}, ErrJSONTooDeep},
		{"depth counted outside escaped quotes", `["\"", [[[1]]]]`, JSONLimits{MaxDepth: 3}, ErrJSONTooDeep},
		{"too many elements", `[1,2,3]`, JSONLimits{MaxElements: 3}, ErrJSONTooManyElements},
		{"too many elements nested", `{"a":{"b":[null]}}`, JSONLimits{MaxElements: 3}, ErrJSONTooManyElements},
		{"duplicate key", `{"a":1,"a":2}`, JSONLimits{}, ErrJSONDuplicateKey},
		{"duplicate key nested", `[{"x":{"a":1,"b":2,"a":3}}]`, JSONLimits{}, ErrJSONDuplicateKey},
		{"duplicate key after unescaping", `{"a":1,"\u0061":2}`, JSONLimits{}, ErrJSONDuplicateKey},
		{"duplicate key after sanitizing", `{"ab":1,"a\u200bb":2}`, JSONLimits{}, ErrJSONDuplicateKey},
		{"duplicate key after NFC", `{"\u00e9":1,"e\u0301":2}`, JSONLimits{}, ErrJSONDuplicateKey},
		{"NaN", `[NaN]`, JSONLimits{}, ErrJSONNonFinite},
		{"Infinity", `{"a":Infinity}`, JSONLimits{}, ErrJSONNonFinite},
		{"-Infinity", `[-Infinity]`, JSONLimits{}, ErrJSONNonFinite},
		{"single quotes", `{'a':1}`, JSONLimits{}, ErrJSONSyntax},
		{"trailing comma", `[1,2,]`, JSONLimits{}, ErrJSONSyntax},
		{"trailing comma in object", `{"a":1,}`, JSONLimits{}, ErrJSONSyntax},
		{"comment", `{"a":1 /* c */}`, JSONLimits{}, ErrJSONSyntax},
		{"line comment", "[1] // c", JSONLimits{}, ErrJSONTrailingData},
		{"unquoted key", `{a:1}`, JSONLimits{}, ErrJSONSyntax},
		{"leading zero", `[01]`, JSONLimits{}, ErrJSONSyntax},
		{"hex number", `[0x10]`, JSONLimits{}, ErrJSONSyntax},
		{"plus sign", `[+1]`, JSONLimits{}, ErrJSONSyntax},
		{"capitalised literal", `[True]`, JSONLimits{}, ErrJSONSyntax},
		{"missing colon", `{"a" 1}`, JSONLimits{}, ErrJSONSyntax},
		{"missing comma", `[1 2]`, JSONLimits{}, ErrJSONSyntax},
		{"non-string key", `{1:2}`, JSONLimits{}, ErrJSONSyntax},
		{"unterminated", `{"a":[1,2`, JSONLimits{}, ErrJSONSyntax},
		{"unterminated string", `["abc`, JSONLimits{}, ErrJSONSyntax},
		{"raw control in string", "[\"a\x01b\"]", JSONLimits{}, ErrJSONSyntax},
		{"mismatched brackets", `[1}`, JSONLimits{}, ErrJSONSyntax},
		{"empty", ``, JSONLimits{}, ErrJSONSyntax},
		{"whitespace only", " \n\t", JSONLimits{}, ErrJSONSyntax},
		{"UTF-7 mark", `+/v8-`, JSONLimits{}, ErrJSONSyntax},
		{"second value", `{} {}`, JSONLimits{}, ErrJSONTrailingData},
		{"second scalar", `1 2`, JSONLimits{}, ErrJSONTrailingData},
		{"trailing garbage", `{"a":1}x`, JSONLimits{}, ErrJSONTrailingData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SanitizeJSON([]byte(tt.in), tt.lim)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v (output %q), want %v", err, got, tt.want)
			}
			if got != "" {
				t.Errorf("output %q returned with an error", got)
			}
			var je *JSONError
			if !errors.As(err, &je) {
				t.Fatalf("err is %T, want *JSONError", err)
			}
		})
	}
}

func TestSanitizeJSONLimitsAreInclusive(t *testing.T) {
	if _, err := SanitizeJSON([]byte(`[[[1]]]`), JSONLimits{MaxDepth: 3}); err != nil {
		t.Errorf("depth 3 at MaxDepth 3: %v", err)
	}
	// [1,2] holds three values: the array and two numbers.
	if _, err := SanitizeJSON([]byte(`[1,2]`), JSONLimits{MaxElements: 3}); err != nil {
		t.Errorf("3 elements at MaxElements 3: %v", err)
	}
	// Keys are not elements.
	if _, err := SanitizeJSON([]byte(`{"a":1,"b":2}`), JSONLimits{MaxElements: 3}); err != nil {
		t.Errorf("object with two members at MaxElements 3: %v", err)
	}
	in := `{"a":"0123456789"}`
	if _, err := SanitizeJSON([]byte(in), JSONLimits{MaxBytes: len(in)}); err != nil {
		t.Errorf("input of exactly MaxBytes: %v", err)
	}
}

// TestSanitizeJSONErrorsNeverEchoContent checks that no error text carries
// any part of the document, including the offending character that
// encoding/json's own messages quote.
func TestSanitizeJSONErrorsNeverEchoContent(t *testing.T) {
	inputs := []string{
		`{"SECRETKEY":1,"SECRETKEY":2}`,
		`{"a": SECRETVALUE}`,
		`[1, 2, Q]`,
		`{"a":1} SECRETTRAILER`,
		`["SECRET` + strings.Repeat("[", 80),
		`{"SECRET": NaN}`,
		`'SECRET'`,
	}
	shape := regexp.MustCompile(`^[A-Za-z0-9 -]+( \(near byte [0-9]+\))?$`)
	for _, in := range inputs {
		_, err := SanitizeJSON([]byte(in), JSONLimits{})
		if err == nil {
			t.Fatalf("no error for %q", in)
		}
		msg := err.Error()
		var je *JSONError
		if !errors.As(err, &je) {
			t.Fatalf("err is %T", err)
		}
		if !strings.HasPrefix(msg, je.Err.Error()) || !shape.MatchString(msg) {
			t.Errorf("error text %q is not a fixed sentinel text", msg)
		}
		for _, leak := range []string{"SECRET", "Q", "'"} {
			if strings.Contains(msg, leak) {
				t.Errorf("error text %q echoes %q", msg, leak)
			}
		}
	}
}

func TestSanitizeJSONOffsets(t *testing.T) {
	_, err := SanitizeJSON([]byte(`[1,2,NaN]`), JSONLimits{})
	var je *JSONError
	if !errors.As(err, &je) || je.Offset != 5 {
		t.Errorf("NaN offset: %v", err)
	}
	_, err = SanitizeJSON([]byte(`[[[[`), JSONLimits{MaxDepth: 3})
	if !errors.As(err, &je) || je.Offset != 3 {
		t.Errorf("depth offset: %v", err)
	}
	_, err = SanitizeJSON([]byte(`"a"`), JSONLimits{MaxBytes: 2})
	if !errors.As(err, &je) || je.Offset != -1 || err.Error() != ErrJSONTooLarge.Error() {
		t.Errorf("size error: %v", err)
	}
}

func FuzzSanitizeJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2,{"b":null}],"c":"\u202e\u001b[1m"}`,
		`[1.5e10,-0,"x\ud800"]`,
		`{"a":1,"a":2}`,
		`[[[[[[]]]]]]`,
		`"\u0000"`,
		`{"é":"e\u0301"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		lim := JSONLimits{MaxDepth: 5, MaxElements: 50}
		out, err := SanitizeJSON(in, lim)
		if err != nil {
			var je *JSONError
			if !errors.As(err, &je) {
				t.Fatalf("err is %T", err)
			}
			return
		}
		if !json.Valid([]byte(out)) || !utf8.ValidString(out) {
			t.Fatalf("output is not valid JSON: %q", out)
		}
		for i := 0; i < len(out); i++ {
			if out[i] < 0x20 {
				t.Fatalf("raw control byte in output %q", out)
			}
		}
		for _, r := range out {
			if invisible(r) {
				t.Fatalf("invisible rune %U in output", r)
			}
		}
		again, err := SanitizeJSON([]byte(out), lim)
		if err != nil || again != out {
			t.Fatalf("not idempotent: %q -> %q, %v", out, again, err)
		}
	})
}

func TestSanitizedObject(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, `{}`},
		{`{"b":1,"a":"x\u202ey"}`, `{"a":"xy","b":1}`},
		{`[1,2]`, `{}`},
		{`null`, `{}`},
		{`{"a":`, `{}`},
	} {
		got, _ := json.Marshal(SanitizedObject([]byte(c.in)))
		if string(got) != c.want {
			t.Errorf("SanitizedObject(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
