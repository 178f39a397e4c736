// Package content turns untrusted bytes (files, web pages, rows, model
// output) into text that is safe to place in a model's context: format
// sanitizers strip what could steer a terminal, a renderer or a reader, and
// provenance framing marks where untrusted data begins and ends with a
// marker the data cannot forge.
//
// Both hold for a client that renders the result as Markdown, with or
// without raw HTML and linkify: sanitized Markdown renders with no element
// that loads anything, no event handler and no link but an absolute
// http(s) one without user information, and a frame keeps its markers
// visible and its header inert. The frame's marker lines are spelled
// "<<< UNTRUSTED-DATA-BEGIN token >>>" (a '<' before a space opens no tag,
// so renderers that pass HTML through no longer swallow them) and every
// caller-influenced header value is quoted in a code span; see Frame. The
// render check in test/render and test/security proves this with
// markdown-it, marked and remark-gfm over a corpus of hostile inputs.
package content

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ErrUTF7 is returned for text that starts with a UTF-7 byte-order mark: it
// could decode differently in a consumer that honours the mark.
var ErrUTF7 = errors.New("UTF-7 encoded text is refused")

// utf7BOMs are the UTF-7 byte-order mark spellings (RFC 2152).
var utf7BOMs = [][]byte{[]byte("+/v8"), []byte("+/v9"), []byte("+/v+"), []byte("+/v/")}

// HasUTF7BOM reports whether b starts with a UTF-7 byte-order mark.
func HasUTF7BOM(b []byte) bool {
	for _, bom := range utf7BOMs {
		if bytes.HasPrefix(b, bom) {
			return true
		}
	}
	return false
}

// SanitizeText decodes b as UTF-8 (invalid sequences become U+FFFD), strips
// terminal escape sequences (CSI, OSC, DCS and friends), C0 and C1 control
// characters except newline and tab, and every invisible or blank-rendering
// character (see invisible: Unicode's Default_Ignorable_Code_Point property
// and a few blank glyphs), and normalizes to NFC. Line endings become \n.
func SanitizeText(b []byte) (string, error) {
	// The UTF-8 byte-order mark goes first, so it cannot hide a UTF-7 mark
	// behind it.
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if HasUTF7BOM(b) {
		return "", ErrUTF7
	}
	return norm.NFC.String(stripControls(b)), nil
}

// SanitizeString applies SanitizeText's character rules to a short string
// that is never decoded as a document (an identifier, a snippet, a model's
// answer), so a leading UTF-7 mark is kept as the plain text it is rather
// than refused.
func SanitizeString(s string) string {
	if plainASCII(s) {
		// The commonest string (a table cell, an identifier) comes back
		// as it is, not copied.
		return s
	}
	return sanitizeString(s)
}

// sanitizeString is SanitizeString without its fast path.
func sanitizeString(s string) string {
	return norm.NFC.String(stripControls([]byte(strings.TrimPrefix(s, "\ufeff"))))
}

// plainASCII reports whether s is printable ASCII (space to tilde) only,
// which sanitizeString returns unchanged: it has no control, escape,
// invisible or non-NFC character and no byte-order mark.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

const (
	esc = 0x1b
	bel = 0x07
)

// stripControls walks b once, removing escape sequences and invisible or
// control characters.
func stripControls(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c == esc {
			i = skipEscape(b, i)
			continue
		}
		if c == '\r' {
			// CRLF and lone CR both become LF.
			sb.WriteByte('\n')
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			i++
			continue
		}
		if c < 0x80 {
			// Copy a run of printable ASCII (and newlines and tabs) at once.
			j := i
			for j < len(b) && b[j] < 0x80 && (b[j] == '\n' || b[j] == '\t' || (b[j] >= 0x20 && b[j] != 0x7f)) {
				j++
			}
			if j > i {
				sb.Write(b[i:j])
				i = j
				continue
			}
			i++ // a C0 control or DEL: dropped
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			sb.WriteRune(utf8.RuneError)
			i++
			continue
		}
		if r == 0x9b {
			// The 8-bit CSI introduces a sequence just like ESC [.
			i = skipCSIBody(b, i+size)
			continue
		}
		if r == 0x9d || r == 0x90 || r == 0x9e || r == 0x9f || r == 0x98 {
			// 8-bit OSC, DCS, PM, APC, SOS: skip to the string terminator.
			i = skipString(b, i+size)
			continue
		}
		if !invisible(r) {
			sb.WriteRune(r)
		}
		i += size
	}
	return sb.String()
}

//go:generate go run gen_ignorable.go

// invisible reports runes that are removed: C1 controls, every code point
// Unicode marks Default_Ignorable_Code_Point (zero-width and joiner
// characters, bidirectional controls, invisible operators, Hangul fillers,
// soft hyphen, variation selectors, tag characters and the unassigned code
// points reserved as ignorable, from the generated defaultIgnorable table),
// the line and paragraph separators and interlinear annotation controls
// (which Unicode leaves out of that property but which render as nothing or
// break lines unseen), and the few assigned characters that are not
// ignorable yet render as a blank glyph (blankRendering).
func invisible(r rune) bool {
	switch {
	case r < 0xad:
		return r >= 0x80 && r <= 0x9f // C1 controls
	case r > 0x3164 && r < 0xfe00:
		// CJK, Hangul syllables and most scripts' blocks hold no member
		// of any class (TestInvisibleFastPath keeps this true).
		return false
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	case r >= 0xfff9 && r <= 0xfffb: // interlinear annotations
		return true
	case blankRendering(r):
		return true
	}
	return unicode.Is(defaultIgnorable, r)
}

// blankRendering reports characters that have a glyph, and so are not
// default-ignorable, but whose glyph is empty: text made of them looks
// blank while not being whitespace, so it survives trimming and splitting.
// Unicode has no property for this; the list is the known members.
func blankRendering(r rune) bool {
	switch r {
	case 0x2800, // BRAILLE PATTERN BLANK
		0x16fe4, // KHITAN SMALL SCRIPT FILLER
		0x1d159: // MUSICAL SYMBOL NULL NOTEHEAD
		return true
	}
	return false
}

// skipEscape skips an ESC-introduced sequence starting at b[i] == ESC and
// returns the index after it.
func skipEscape(b []byte, i int) int {
	i++ // ESC
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '[':
		return skipCSIBody(b, i+1)
	case ']', 'P', '^', '_', 'X':
		// OSC, DCS, PM, APC, SOS: a string terminated by BEL or ST.
		return skipString(b, i+1)
	}
	// Two- and three-byte escapes: intermediates 0x20-0x2f then a final
	// byte 0x30-0x7e. Anything else ends the sequence without being eaten,
	// so ESC before a newline or a non-ASCII character removes only ESC.
	j := i
	for j < len(b) && b[j] >= 0x20 && b[j] <= 0x2f {
		j++
	}
	if j < len(b) && b[j] >= 0x30 && b[j] <= 0x7e {
		return j + 1
	}
	return i
}

// skipCSIBody skips parameter and intermediate bytes and the final byte.
func skipCSIBody(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		switch {
		case c >= 0x40 && c <= 0x7e:
			return i + 1
		case c >= 0x20 && c <= 0x3f:
			i++
		default:
			// Malformed: end the sequence without eating the byte.
			return i
		}
	}
	return i
}

// skipString skips to BEL, ESC \ or the 8-bit ST (U+009C).
func skipString(b []byte, i int) int {
	for i < len(b) {
		switch {
		case b[i] == bel:
			return i + 1
		case b[i] == esc && i+1 < len(b) && b[i+1] == '\\':
			return i + 2
		case b[i] == 0xc2 && i+1 < len(b) && b[i+1] == 0x9c:
			return i + 2
		}
		i++
	}
	return i
}

// CutNote is the sentence a tool's text ends with when Truncate cut what
// it frames (cut), naming the setting and its value: the model must not
// take the end of the frame for the end of the content. It is "" when
// nothing was cut.
func CutNote(cut bool, setting string, limit int64) string {
	if !cut {
		return ""
	}
	return fmt.Sprintf("\nThe text above was cut at %s (%d bytes); the rest is not shown.", setting, limit)
}

// Truncate cuts s to at most maxBytes without splitting a UTF-8 sequence and
// reports whether it cut.
func Truncate(s string, maxBytes int) (string, bool) {
	if len(s) <= maxBytes {
		return s, false
	}
	if maxBytes <= 0 {
		return "", true
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
