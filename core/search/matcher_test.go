package search

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNewMatcherRefusals(t *testing.T) {
	cases := []struct {
		name  string
		query string
		regex bool
		opts  MatcherOptions
		want  error
	}{
		{"empty", "", false, MatcherOptions{}, ErrQueryEmpty},
		{"too long", strings.Repeat("é", 201), false, MatcherOptions{}, ErrQueryTooLong},
		{"too long for a custom cap", "abcdef", false, MatcherOptions{MaxQueryChars: 5}, ErrQueryTooLong},
		{"newline", "a\nb", false, MatcherOptions{}, ErrQueryMultiline},
		{"carriage return", "a\rb", true, MatcherOptions{}, ErrQueryMultiline},
		{"invalid UTF-8", "a\xffb", false, MatcherOptions{}, ErrQueryEncoding},
		{"unbalanced", "secret(", true, MatcherOptions{}, ErrPatternInvalid},
		{"backreference", `(a)\1`, true, MatcherOptions{}, ErrPatternInvalid},
		{"lookahead", `secret(?=x)`, true, MatcherOptions{}, ErrPatternInvalid},
		{"RE2's own repeat limit", `a{1001}`, true, MatcherOptions{}, ErrPatternInvalid},
		{"repeat above the cap", `a{101}`, true, MatcherOptions{}, ErrPatternTooComplex},
		{"open repeat above the cap", `a{101,}`, true, MatcherOptions{}, ErrPatternTooComplex},
		{"RE2's nested repeat limit", `((a{50}){50})`, true, MatcherOptions{}, ErrPatternInvalid},
		{"nested repeats", `(((abcdef){10}){10}){10}`, true, MatcherOptions{}, ErrPatternTooComplex},
		{"large classes repeated", `[\p{L}\p{N}]{100}[\p{L}\p{N}]{100}`, true, MatcherOptions{MaxProgramInsts: 150}, ErrPatternTooComplex},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMatcher(tc.query, tc.regex, tc.opts)
			if !errors.Is(err, tc.want) || m != nil {
				t.Fatalf("got %v, %v; want %v", m, err, tc.want)
			}
			if tc.query != "" && strings.Contains(err.Error(), tc.query) {
				t.Errorf("the error echoes the query: %v", err)
			}
		})
	}
}

func TestMatcherIndex(t *testing.T) {
	cases := []struct {
		name       string
		query      string
		regex      bool
		fold       bool
		line       string
		start, end int
	}{
		{"literal", "needle", false, false, "hay needle hay", 4, 10},
		{"literal is case-sensitive", "Needle", false, false, "hay needle", -1, -1},
		{"literal ignores regex syntax", "a.c", false, false, "abc a.c", 4, 7},
		{"literal with regex metacharacters", "(x+)*$", false, false, "y (x+)*$", 2, 8},
		{"folded literal", "NEEDLE", false, true, "hay NeEdLe", 4, 10},
		{"folded literal stays literal", "a.c", false, true, "ABC A.C", 4, 7},
		{"folded literal, Unicode", "ÉTÉ", false, true, "un été", 3, 8},
		{"folded literal, Kelvin sign", "kelvin", false, true, "a \u212aELVIN", 2, 10},
		{"folded literal, long s", "ss", false, true, "xſS", 1, 4},
		{"folded literal, no match", "abd", false, true, "ABC", -1, -1},
		{"folded literal, candidate at the very end", "ab", false, true, "xxa", -1, -1},
		{"folded literal, invalid byte is not U+FFFD", "\ufffd", false, true, "a\xffb\ufffd", 3, 6},
		{"literal, invalid byte is not U+FFFD", "\ufffd", false, false, "a\xffb\ufffd", 3, 6},
		{"regex", `ne+dle`, true, false, "hay neeeedle", 4, 12},
		{"regex anchors bind to the line", `^hay$`, true, false, "hay", 0, 3},
		{"regex folded", `ne+dle`, true, true, "NEEDLE", 0, 6},
		{"regex no match", `x{3}`, true, false, "xx", -1, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMatcher(tc.query, tc.regex, MatcherOptions{CaseInsensitive: tc.fold})
			if err != nil {
				t.Fatal(err)
			}
			if m.Regex() != tc.regex {
				t.Errorf("Regex() = %v", m.Regex())
			}
			start, end := m.Index([]byte(tc.line))
			if start != tc.start || end != tc.end {
				t.Errorf("Index = %d, %d; want %d, %d", start, end, tc.start, tc.end)
			}
		})
	}
}

// TestRegexIsLinear feeds patterns that backtracking engines take
// exponential time on. RE2 has no backtracking, so these finish; the test
// has no timer, it would hang instead of failing if that ever changed.
func TestRegexIsLinear(t *testing.T) {
	line := []byte(strings.Repeat("a", 50_000) + "!")
	for _, p := range []string{`(a+)+$`, `(a|aa)+$`, `(a|a?)+b`, `(.*a){20}$`} {
		m, err := NewMatcher(p, true, MatcherOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if start, _ := m.Index(line); start != -1 {
			t.Errorf("%s matched at %d", p, start)
		}
	}
}

// TestLiteralIndexAgreesWithBytesIndex checks the rare-byte literal search
// against bytes.Index on random text over a small alphabet (many false
// stops, so the hand-over to bytes.Index runs too) and on real prose.
func TestLiteralIndexAgreesWithBytesIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aab sM.\t\xc3\xa9"
	randText := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	for range 20000 {
		hay := randText(rng.IntN(300))
		var needle []byte
		if len(hay) > 0 && rng.IntN(2) == 0 {
			i := rng.IntN(len(hay))
			needle = hay[i:min(len(hay), i+1+rng.IntN(8))]
		} else {
			needle = randText(1 + rng.IntN(6))
		}
		if bytes.ContainsAny(needle, "\r\n") || !utf8.Valid(needle) {
			continue
		}
		m, err := NewMatcher(string(needle), false, MatcherOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Index(hay, needle)
		if got, end := m.Index(hay); got != want || (got >= 0 && end != got+len(needle)) {
			t.Fatalf("Index(%q, %q) = %d, %d; bytes.Index says %d", hay, needle, got, end, want)
		}
	}
	prose := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog; sync.Mutex guards it.\n"), 200)
	for _, q := range []string{"sync.Mutex", "the lazy", "dog; s", "zzz", "x", "guards it.\nthe"[:9], "fox jumps over the lazy dog; sync.Mutex guards it."} {
		m, _ := NewMatcher(q, false, MatcherOptions{})
		for _, off := range []int{0, 1, 70, len(prose) - 20} {
			if got, _ := m.Index(prose[off:]); got != bytes.Index(prose[off:], []byte(q)) {
				t.Fatalf("%q at %d: %d", q, off, got)
			}
		}
	}
}
