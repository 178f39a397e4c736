package security

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normalized is text as the detectors see it: NFKC (fullwidth letters and
// digits, ligatures and compatibility forms folded to their plain
// equivalents) with format and other invisible characters removed, so a
// key split by a zero-width space or written in fullwidth letters matches
// like the plain one. edits records, in order, each original non-ASCII
// character and the normalized bytes it became; ASCII between them maps one
// to one. A match maps back to the whole original span it came from,
// invisible characters inside it included.
type normalized struct {
	text  string
	edits []normEdit
}

// normEdit says normalized bytes [ns, ns+nl) came from original bytes
// [os, os+ol); nl is zero for a dropped invisible character.
type normEdit struct{ ns, nl, os, ol int }

// normalizeForScan folds text one character at a time: ASCII is kept, an
// invisible character dropped, any other character replaced by its NFKC
// form. Folding per character (not per combining sequence) is enough for
// what the scanner looks for, which is ASCII once folded; it keeps the map
// to the original exact and the pass linear.
func normalizeForScan(text string) normalized {
	var out strings.Builder
	out.Grow(len(text))
	var edits []normEdit
	for i := 0; i < len(text); {
		j := i
		for j < len(text) && text[j] < utf8.RuneSelf {
			j++
		}
		out.WriteString(text[i:j])
		if i = j; i == len(text) {
			break
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		e := normEdit{ns: out.Len(), os: i, ol: size}
		if !invisible(r) {
			out.WriteString(norm.NFKC.String(text[i : i+size]))
		}
		e.nl = out.Len() - e.ns
		edits = append(edits, e)
		i += size
	}
	return normalized{text: out.String(), edits: edits}
}

// normalizeText is text as every detector here sees it (secrets,
// canaries): NFKC per character with invisible characters dropped. ASCII
// text is returned as is.
func normalizeText(text string) string {
	if isASCII(text) {
		return text
	}
	return normalizeForScan(text).text
}

// origSpan maps normalized byte n to the original span of the character
// it came from.
func (n normalized) origSpan(k int) (start, end int) {
	// The last edit starting at or before k.
	i := sort.Search(len(n.edits), func(i int) bool { return n.edits[i].ns > k }) - 1
	// That edit either produced k, or ends at or before it and k is ASCII
	// copied after it (a dropped character's edit is empty).
	if i < 0 {
		return k, k + 1
	}
	e := n.edits[i]
	if k < e.ns+e.nl {
		return e.os, e.os + e.ol
	}
	o := e.os + e.ol + k - (e.ns + e.nl)
	return o, o + 1
}

// toOriginal maps spans found in n.text back to the original text: a
// span starts where its first character's original starts and ends where
// its last character's original ends. The value (what the tag is computed
// from) stays the normalized one, so the fullwidth and plain spellings of a
// key get the same placeholder.
func (n normalized) toOriginal(spans []secretSpan) {
	for i := range spans {
		sp := &spans[i]
		s, _ := n.origSpan(sp.start)
		_, e := n.origSpan(sp.end - 1)
		sp.start, sp.end = s, e
	}
}

// invisible reports characters that render as nothing and so can hide
// inside a token: Unicode format characters (Cf: zero-width space and
// joiners, word joiner, soft hyphen, bidirectional controls, BOM, tags),
// variation selectors, the combining grapheme joiner, the Mongolian
// variation selectors and the Hangul fillers, which render blank.
func invisible(r rune) bool {
	switch {
	case unicode.Is(unicode.Cf, r),
		unicode.Is(unicode.Variation_Selector, r),
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
		r == 0x034F, r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0,
		r >= 0x180B && r <= 0x180F:
		return true
	}
	return false
}
