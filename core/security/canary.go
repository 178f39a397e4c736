package security

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"unicode/utf8"
)

// MinCanaryLength is the shortest canary accepted (after normalization): a
// shorter value would trip on ordinary text.
const MinCanaryLength = 12

// maxPercentDecodes bounds how many layers of percent-encoding a scan peels.
const maxPercentDecodes = 3

// ErrCanaryTooShort refuses a canary shorter than MinCanaryLength. It never
// quotes the value.
var ErrCanaryTooShort = errors.New("a canary token must be at least 12 characters long")

// Canaries finds planted honeytoken values in text. Matching is one pass of
// an Aho-Corasick automaton, case-insensitive, over the text as given and
// over its normalized forms: NFKC with zero-width and format characters
// removed, and percent-decoded (up to three layers). Each canary is also
// looked for in base64 (standard and URL alphabets, every alignment) and in
// hex. A Canaries is immutable and safe for concurrent use.
type Canaries struct {
	dfa *acDFA
	ids []string // ids[pattern's canary] is the canary's id
}

// CanaryID names a canary in audit lines without revealing it: the first
// eight bytes of the SHA-256 of its normalized form, in hex.
func CanaryID(token string) string {
	sum := sha256.Sum256([]byte(foldCanary(token)))
	return "canary-" + hex.EncodeToString(sum[:8])
}

// NewCanaries builds the matcher for tokens. Empty entries are skipped; a
// token shorter than MinCanaryLength is refused. No tokens is valid and
// matches nothing.
func NewCanaries(tokens []string) (*Canaries, error) {
	c := &Canaries{}
	var patterns []string
	var owner []int
	for _, t := range tokens {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		folded := foldCanary(t)
		if utf8.RuneCountInString(folded) < MinCanaryLength {
			return nil, ErrCanaryTooShort
		}
		idx := len(c.ids)
		c.ids = append(c.ids, CanaryID(t))
		for _, p := range canaryForms(t, folded) {
			patterns = append(patterns, p)
			owner = append(owner, idx)
		}
	}
	if len(patterns) > 0 {
		c.dfa = buildDFA(patterns, owner)
	}
	return c, nil
}

// Len returns how many canaries the matcher holds.
func (c *Canaries) Len() int {
	if c == nil {
		return 0
	}
	return len(c.ids)
}

// Match reports the id of the first canary found in s.
func (c *Canaries) Match(s string) (string, bool) {
	if c == nil || c.dfa == nil {
		return "", false
	}
	if i := c.match(s, 0); i >= 0 {
		return c.ids[i], true
	}
	return "", false
}

func (c *Canaries) match(s string, depth int) int {
	if i := c.dfa.scan(s); i >= 0 {
		return i
	}
	if !isASCII(s) {
		if n := normalizeText(s); n != s {
			if i := c.dfa.scan(n); i >= 0 {
				return i
			}
			s = n
		}
	}
	if depth < maxPercentDecodes && strings.IndexByte(s, '%') >= 0 {
		if d := percentDecode(s); d != s {
			return c.match(d, depth+1)
		}
	}
	return -1
}

// foldCanary is the normalized form a canary is matched in.
func foldCanary(s string) string {
	return strings.ToLower(normalizeText(s))
}

// canaryForms are the strings a canary is looked for as: itself, its base64
// encodings (the part of each alignment that does not depend on the bytes
// around it) and its hex encoding.
func canaryForms(raw, folded string) []string {
	forms := []string{folded}
	src := []byte(strings.TrimSpace(raw))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for shift := 0; shift < 3; shift++ {
			// Prefix shift bytes so the token starts at each position of a
			// 3-byte group; drop the output characters that mix in the
			// prefix and the trailing partial group.
			buf := append(make([]byte, shift), src...)
			out := enc.EncodeToString(buf)
			start := 0
			if shift > 0 {
				start = (shift*8 + 5) / 6 // characters touched by the prefix
			}
			end := (len(buf) * 8) / 6 // characters fully determined by the input
			if end-start >= MinCanaryLength && end <= len(out) {
				forms = append(forms, strings.ToLower(out[start:end]))
			}
		}
	}
	forms = append(forms, hex.EncodeToString(src))
	return forms
}

// percentDecode decodes %XX escapes (and '+' as a space, as in a query);
// a malformed escape is kept as written.
func percentDecode(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		case c == '+':
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// acDFA is an Aho-Corasick automaton compiled to a full DFA over byte
// classes: scanning costs one table load per input byte. ASCII letters are
// folded to lower case by the class map, so matching ignores ASCII case.
type acDFA struct {
	class   [256]uint8
	nclass  int
	next    []int32 // next[state*nclass+class]
	matchOf []int32 // canary index matched on reaching the state, or -1
}

func buildDFA(patterns []string, owner []int) *acDFA {
	d := &acDFA{}
	// Class 0 is every byte no pattern uses.
	var used [256]bool
	for _, p := range patterns {
		for i := 0; i < len(p); i++ {
			used[lowerByte(p[i])] = true
		}
	}
	n := 1
	var classOf [256]uint8
	for b := 0; b < 256; b++ {
		if used[b] {
			classOf[b] = uint8(n)
			n++
		}
	}
	for b := 0; b < 256; b++ {
		d.class[b] = classOf[lowerByte(byte(b))]
	}
	d.nclass = n

	// The trie, with -1 for a missing edge.
	newState := func() int32 {
		for range n {
			d.next = append(d.next, -1)
		}
		d.matchOf = append(d.matchOf, -1)
		return int32(len(d.matchOf) - 1)
	}
	newState()
	for pi, p := range patterns {
		s := int32(0)
		for i := 0; i < len(p); i++ {
			c := int32(d.class[p[i]])
			if d.next[s*int32(n)+c] < 0 {
				t := newState()
				d.next[s*int32(n)+c] = t
			}
			s = d.next[s*int32(n)+c]
		}
		if d.matchOf[s] < 0 {
			d.matchOf[s] = int32(owner[pi])
		}
	}
	// Breadth-first: failure links, then every missing edge filled from
	// the failure state's, so scanning never follows a link.
	fail := make([]int32, len(d.matchOf))
	queue := make([]int32, 0, len(d.matchOf))
	order := []int32{0} // states breadth-first, for the renumbering below
	for c := 0; c < n; c++ {
		t := d.next[c]
		if t < 0 {
			d.next[c] = 0
			continue
		}
		fail[t] = 0
		queue = append(queue, t)
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		order = append(order, s)
		if d.matchOf[s] < 0 {
			d.matchOf[s] = d.matchOf[fail[s]]
		}
		for c := 0; c < n; c++ {
			t := d.next[s*int32(n)+int32(c)]
			if t < 0 {
				d.next[s*int32(n)+int32(c)] = d.next[fail[s]*int32(n)+int32(c)]
				continue
			}
			fail[t] = d.next[fail[s]*int32(n)+int32(c)]
			queue = append(queue, t)
		}
	}
	d.renumber(order)
	return d
}

// renumber lays the states out breadth-first: text that matches nothing
// stays among the shallow states, which then share a few cache lines
// instead of being spread over the whole table.
func (d *acDFA) renumber(order []int32) {
	n := d.nclass
	newID := make([]int32, len(order))
	for i, s := range order {
		newID[s] = int32(i)
	}
	next := make([]int32, len(d.next))
	matchOf := make([]int32, len(d.matchOf))
	for i, s := range order {
		matchOf[i] = d.matchOf[s]
		for c := 0; c < n; c++ {
			next[i*n+c] = newID[d.next[int(s)*n+c]]
		}
	}
	d.next, d.matchOf = next, matchOf
}

// scan returns the canary index of the first match in s, or -1.
func (d *acDFA) scan(s string) int {
	n := int32(d.nclass)
	st := int32(0)
	for i := 0; i < len(s); i++ {
		st = d.next[st*n+int32(d.class[s[i]])]
		if m := d.matchOf[st]; m >= 0 {
			return int(m)
		}
	}
	return -1
}

func lowerByte(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
