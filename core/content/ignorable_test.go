package content

import (
	"strings"
	"testing"
	"unicode"
)

// derivedIgnorable is Default_Ignorable_Code_Point as DerivedCoreProperties
// defines it, computed from the Go standard library's own Unicode tables: an
// independent check of the table generated from the Unicode data file.
func derivedIgnorable(r rune) bool {
	if !unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) && !unicode.Is(unicode.Cf, r) && !unicode.Is(unicode.Variation_Selector, r) {
		return false
	}
	return !unicode.Is(unicode.White_Space, r) && !(r >= 0xfff9 && r <= 0xfffb) &&
		!(r >= 0x13430 && r <= 0x13440) && !unicode.Is(unicode.Prepended_Concatenation_Mark, r)
}

func TestIgnorableTableMatchesTheStandardLibrary(t *testing.T) {
	if ignorableUnicodeVersion != unicode.Version {
		t.Skipf("table is Unicode %s, the standard library %s: regenerate with go generate", ignorableUnicodeVersion, unicode.Version)
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := unicode.Is(defaultIgnorable, r), derivedIgnorable(r); got != want {
			t.Errorf("U+%04X: table says %v, derivation %v", r, got, want)
		}
	}
}

// TestSanitizeRemovesEveryInvisibleCodePoint is the class, not the examples:
// every default-ignorable code point and every known blank glyph is removed
// by each sanitizer and by SanitizeString, alone and between letters.
func TestSanitizeRemovesEveryInvisibleCodePoint(t *testing.T) {
	var removed []rune
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if derivedIgnorable(r) {
			removed = append(removed, r)
		}
	}
	removed = append(removed, 0x2800, 0x16fe4, 0x1d159, 0x3164, 0x115f, 0x1160, 0xffa0, 0x00ad, 0x034f, 0x180e)
	for _, r := range removed {
		in := "a" + string(r) + "b " + string(r)
		want := "ab "
		if got, _ := SanitizeText([]byte(in)); got != want {
			t.Errorf("SanitizeText kept U+%04X: %q", r, got)
		}
		if got, _ := SanitizeMarkdown([]byte(in)); got != want {
			t.Errorf("SanitizeMarkdown kept U+%04X: %q", r, got)
		}
		if got := SanitizeString(in); got != want {
			t.Errorf("SanitizeString kept U+%04X: %q", r, got)
		}
		if got, err := SanitizeJSON([]byte(`{"k":"`+in+`"}`), JSONLimits{MaxBytes: 1 << 10, MaxDepth: 4, MaxElements: 16}); err != nil || strings.ContainsRune(got, r) {
			t.Errorf("SanitizeJSON kept U+%04X: %q %v", r, got, err)
		}
	}
}

// TestSanitizeKeepsVisibleFormatting guards the other side: whitespace that
// renders as space, and the format characters Unicode says must stay
// visible, are kept.
func TestSanitizeKeepsVisibleFormatting(t *testing.T) {
	for _, r := range []rune{'\t', 0xa0, 0x2003, 0x202f, 0x3000, 0x0600, 0x06dd, 0x110bd, 0x13430, 0x2801, 0xfffc} {
		in := "a" + string(r) + "b"
		if got, _ := SanitizeText([]byte(in)); got != in {
			t.Errorf("U+%04X removed: %q", r, got)
		}
	}
}

// BenchmarkSanitizeTextMixedScripts1MB is prose that is mostly outside
// ASCII, where every rune is checked against the invisible classes.
func BenchmarkSanitizeTextMixedScripts1MB(b *testing.B) {
	para := []byte(strings.Repeat("Привет, мир. 你好，世界。 Γειά σου κόσμε. مرحبا بالعالم. नमस्ते दुनिया. ", 1<<20/160))
	b.SetBytes(int64(len(para)))
	for b.Loop() {
		if _, err := SanitizeText(para); err != nil {
			b.Fatal(err)
		}
	}
}

// TestInvisibleFastPath checks invisible's early answers against the
// classes it is defined by, for every code point.
func TestInvisibleFastPath(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029 || r >= 0xfff9 && r <= 0xfffb ||
			blankRendering(r) || unicode.Is(defaultIgnorable, r)
		if got := invisible(r); got != want {
			t.Fatalf("invisible(U+%04X) = %v, want %v", r, got, want)
		}
	}
}
