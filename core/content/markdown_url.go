package content

import (
	"html"
	"net/url"
	"strings"
)

// This file decides which link targets SanitizeMarkdown keeps: it decodes
// a target as a renderer would and writes an accepted one canonically.

// urlSafe marks the bytes a canonical link target keeps as they are: the
// unreserved and most reserved characters. Everything else, including
// parentheses, brackets, angle brackets, quotes, backslash, space and all
// non-ASCII bytes, is percent-encoded, so the target reads the same to every
// Markdown dialect and cannot end a link, autolink or definition early.
var urlSafe = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range []byte("-._~:/?#@!$&'*+,;=%") {
		t[c] = true
	}
	return t
}()

// canonicalHTTPURL returns the canonical form of an absolute http or https
// URL with a host and no user information, or false for anything else.
// raw must already be decoded from its Markdown spelling.
func canonicalHTTPURL(raw string) (string, bool) {
	// As a browser's URL parser does: drop tabs and newlines anywhere, and
	// leading and trailing controls and spaces.
	if strings.ContainsAny(raw, "\t\n\r") {
		raw = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(raw)
	}
	raw = strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	var rest string
	switch {
	case len(raw) > 7 && strings.EqualFold(raw[:7], "http://"):
		rest = raw[7:]
	case len(raw) > 8 && strings.EqualFold(raw[:8], "https://"):
		rest = raw[8:]
	default:
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.User != nil || u.Hostname() == "" {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(raw) + 8)
	b.WriteString(u.Scheme)
	b.WriteString("://")
	const hexDigits = "0123456789ABCDEF"
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if urlSafe[c] {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String(), true
}

// decodeLinkTarget undoes Markdown's spellings of a link target: backslash
// escapes of ASCII punctuation and HTML entity references.
func decodeLinkTarget(s string) string {
	if !strings.ContainsAny(s, `\&`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			b.WriteByte(s[i+1])
			i += 2
		case s[i] == '&':
			// html.UnescapeString knows every HTML5 entity, &colon; and
			// &Tab; included, and numeric references with or without ';'.
			j := i + 1
			for j < len(s) && j-i < 40 && s[j] != ';' && s[j] != '&' && s[j] != '\\' {
				j++
			}
			if j < len(s) && s[j] == ';' {
				j++
			}
			b.WriteString(html.UnescapeString(s[i:j]))
			i = j
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}
