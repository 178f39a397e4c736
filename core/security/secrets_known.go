package security

import (
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// MinKnownSecretLen is the shortest configured value the scanner looks
// for: a shorter one would redact ordinary words and numbers everywhere,
// and is no secret worth the name.
const MinKnownSecretLen = 8

// WithKnown returns a scanner with the same key that also redacts each of
// values wherever it appears, whatever its shape, as SERVER_SECRET: the
// server's own API keys, signing secrets and connection strings. A value
// that is a URL or a key=value DSN also contributes its password. Values
// shorter than MinKnownSecretLen are skipped, and so is a DSN password
// that is a plain lower-case word (a test database's "postgres"): looking
// for it would redact the word in every text.
func (s *Scanner) WithKnown(values ...string) *Scanner {
	known := slices.Clone(s.known)
	add := func(v string) {
		if len(v) >= MinKnownSecretLen && !slices.Contains(known, v) {
			known = append(known, v)
		}
	}
	for _, v := range values {
		v = strings.TrimSpace(v)
		add(v)
		if p := dsnPassword(v); len(p) >= MinKnownSecretLen && !plainWord(p) {
			add(p)
		}
	}
	// Longest first: a DSN is taken whole before its password is found
	// inside it again (the overlap would merge anyway; this keeps the tag
	// the DSN's).
	slices.SortStableFunc(known, func(a, b string) int { return len(b) - len(a) })
	return &Scanner{key: s.key, known: known}
}

// dsnPassword is the password in a URL's user information or a key=value
// connection string's password= field, or "".
func dsnPassword(v string) string {
	if u, err := url.Parse(v); err == nil && u.User != nil {
		p, _ := u.User.Password()
		return p
	}
	for _, f := range strings.Fields(v) {
		if k, val, ok := strings.Cut(f, "="); ok && strings.EqualFold(k, "password") {
			return strings.Trim(val, `'"`)
		}
	}
	return ""
}

// plainWord reports a value of lower-case letters only.
func plainWord(v string) bool {
	for _, r := range v {
		if !unicode.IsLower(r) {
			return false
		}
	}
	return true
}

// findKnown reports every occurrence of the configured values.
func (s *Scanner) findKnown(text string, found []secretSpan) []secretSpan {
	for _, v := range s.known {
		for from := 0; ; {
			k := strings.Index(text[from:], v)
			if k < 0 {
				break
			}
			start := from + k
			found = append(found, secretSpan{start: start, end: start + len(v), typ: SecretServerSecret, value: v})
			from = start + len(v)
		}
	}
	return found
}
