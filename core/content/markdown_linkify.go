package content

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is the last Markdown pass of SanitizeMarkdown: it keeps
// linkifiers from making links out of text. Renderers with linkify
// (markdown-it's linkify-it, marked's GFM autolinks, remark-gfm's autolink
// literals) turn bare text into links: ftp:// and // addresses, e-mail
// addresses into mailto: links, xmpp:user@host, and URLs with user
// information such as https://trusted.example@attacker.example/. Only
// absolute http(s) links without user information may result, so two
// triggers are defanged wherever they occur in text, however spelled
// (literally, as a backslash escape or as a character reference, since
// renderers decode both before linkifying):
//
//   - "@" between two non-blank characters becomes "\[@\]" (rendered
//     "[@]"), which no linkifier reads as part of an address, unless it
//     is in the path, query or fragment of a bare http(s) URL and does not
//     start something shaped like a domain (so https://host/@user stays),
//     or is already "[@]";
//   - "//" after a scheme other than http or https, or at the start of a
//     word before a host (a scheme-relative address), becomes "\[//\]".
//
// The link targets and autolinks the earlier passes kept are canonical
// http(s) URLs and are copied unchanged. Text in code spans and code blocks
// is defanged like any other, as the rest of the sanitizer treats it.

// linkifyTriggers are the bytes that can start a trigger or its spelling.
const linkifyTriggers = "@/\\&<]"

// urlState tracks where a bare http(s) URL in the text has got to.
type urlState int

const (
	outsideURL urlState = iota
	inAuthority
	inPath
)

// logicalChar is one character as a renderer reads it: a literal rune, a
// backslash-escaped punctuation character or a decoded character reference,
// with the bytes it is spelled with.
type logicalChar struct {
	r          rune
	start, end int
}

// charAt reads the logical character at s[i].
func charAt(s string, i int) logicalChar {
	c := s[i]
	switch {
	case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
		return logicalChar{rune(s[i+1]), i, i + 2}
	case c == '&':
		if end := entityEnd(s, i); end > 0 {
			if d := html.UnescapeString(s[i:end]); d != s[i:end] {
				r, n := utf8.DecodeRuneInString(d)
				if n != len(d) {
					r = 'x' // several characters: none of them a trigger's
				}
				return logicalChar{r, i, end}
			}
		}
	case c >= utf8.RuneSelf:
		r, n := utf8.DecodeRuneInString(s[i:])
		return logicalChar{r, i, i + n}
	}
	return logicalChar{rune(c), i, i + 1}
}

// entityEnd returns the end of the CommonMark character reference at
// s[i] == '&' (named, &#digits; or &#xhex;), or 0.
func entityEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] == '#' {
		j++
		hex := j < len(s) && (s[j] == 'x' || s[j] == 'X')
		if hex {
			j++
		}
		k := j
		for k < len(s) && k-j < 7 && (s[k] >= '0' && s[k] <= '9' || hex && (s[k]|0x20 >= 'a' && s[k]|0x20 <= 'f')) {
			k++
		}
		if k == j || k >= len(s) || s[k] != ';' {
			return 0
		}
		return k + 1
	}
	k := j
	for k < len(s) && k-j < 32 && (isASCIILetter(s[k]) || k > j && s[k] >= '0' && s[k] <= '9') {
		k++
	}
	if k == j || k >= len(s) || s[k] != ';' {
		return 0
	}
	return k + 1
}

func isBlankRune(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r >= utf8.RuneSelf && unicode.IsSpace(r)
}

// inURLText reports the characters every linkifier keeps inside a URL.
func inURLText(r rune) bool {
	return r < utf8.RuneSelf && (isASCIILetter(byte(r)) || r >= '0' && r <= '9' || strings.ContainsRune("-._~/?#%=&+!$*,;:@", r))
}

// recentChars remembers the last few logical characters and where each
// was written to the output.
type recentChars struct {
	r   [8]rune
	out [8]int
	n   int
}

func (h *recentChars) push(r rune, outAt int) {
	h.r[h.n%8], h.out[h.n%8] = r, outAt
	h.n++
}

// back returns the k-th character before the current one (1 is the last
// pushed), or ' ' before the start.
func (h *recentChars) back(k int) rune {
	if k > h.n || k > 8 {
		return ' '
	}
	return h.r[(h.n-k)%8]
}

// defuseLinkify defangs what a linkifier would turn into a link that is
// not an absolute http(s) one without user information; see the file
// comment. Its output is a fixed point: defusing it again changes nothing.
func defuseLinkify(s string) string {
	if !strings.ContainsAny(s, "@/&\\") {
		return s
	}
	out := make([]byte, 0, len(s)+16)
	var recent recentChars
	state := outsideURL
	changed := false
	for i := 0; i < len(s); {
		if k := strings.IndexAny(s[i:], linkifyTriggers); k != 0 {
			// Plain text up to the next byte that matters.
			j := len(s)
			if k > 0 {
				j = i + k
			}
			out = appendPlain(out, s[i:j], &recent, &state)
			i = j
			continue
		}
		if n := keptLinkLen(s, i); n > 0 {
			// A canonical target or autolink the earlier passes kept.
			out = append(out, s[i:i+n]...)
			recent.push('>', len(out))
			state = outsideURL
			i += n
			continue
		}
		ch := charAt(s, i)
		switch ch.r {
		case '@':
			next := ' '
			if ch.end < len(s) {
				next = charAt(s, ch.end).r
			}
			prev := recent.back(1)
			if !isBlankRune(prev) && !isBlankRune(next) && !(prev == '[' && next == ']') && (state != inPath || domainShapedAt(s, ch.end)) {
				// What a renderer shows last is the "]".
				recent.push(']', len(out))
				out = append(out, `\[@\]`...)
				changed = true
				state = outsideURL
				i = ch.end
				continue
			}
		case '/':
			if recent.back(1) == '/' && recent.n > 0 {
				switch danger, web := slashesDanger(s, ch.end, &recent); {
				case danger:
					// Rewrite both slashes: the first one is already out.
					first := recent.out[(recent.n-1)%8]
					out = append(out[:first], `\[//\]`...)
					changed = true
					recent.push(']', first)
					state = outsideURL
					i = ch.end
					continue
				case web:
					recent.push('/', len(out))
					out = append(out, s[i:ch.end]...)
					state = inAuthority
					i = ch.end
					continue
				}
			}
		}
		state = advanceURLState(state, ch.r, &recent)
		recent.push(ch.r, len(out))
		out = append(out, s[i:ch.end]...)
		i = ch.end
	}
	if !changed {
		return s
	}
	return string(out)
}

// appendPlain writes run, which holds no trigger byte (so each rune is a
// logical character), and brings the state up to its end: the bare-URL
// state needs every character only while inside a URL, and recent only the
// last few characters.
func appendPlain(out []byte, run string, recent *recentChars, state *urlState) []byte {
	for k := 0; *state != outsideURL && k < len(run); {
		r, n := utf8.DecodeRuneInString(run[k:])
		*state = advanceURLState(*state, r, recent)
		k += n
	}
	base := len(out)
	out = append(out, run...)
	start := len(run)
	for c := 0; c < len(recent.r) && start > 0; c++ {
		_, n := utf8.DecodeLastRuneInString(run[:start])
		start -= n
	}
	for k := start; k < len(run); {
		r, n := utf8.DecodeRuneInString(run[k:])
		recent.push(r, base+k)
		k += n
	}
	return out
}

// advanceURLState moves the bare-URL state past r.
func advanceURLState(state urlState, r rune, recent *recentChars) urlState {
	switch {
	case state == outsideURL || !inURLText(r):
		return outsideURL
	case state == inAuthority && (r == '/' || r == '?' || r == '#'):
		return inPath
	}
	return state
}

// slashesDanger examines "//" whose second slash ends at end, the first
// being the last character in recent: danger if a linkifier would make a
// link of another scheme or a scheme-relative one from it, web if it is
// the "//" of an http or https URL.
func slashesDanger(s string, end int, recent *recentChars) (danger, web bool) {
	before := recent.back(2)
	if before == ':' {
		scheme := make([]rune, 0, 5)
		for k := 3; k <= 7; k++ {
			r := recent.back(k)
			if r >= utf8.RuneSelf || !isASCIILetter(byte(r)) {
				break
			}
			scheme = append(scheme, unicode.ToLower(r))
		}
		// scheme holds the letters before ':' nearest first.
		if hasReversedSuffix(scheme, "https") || hasReversedSuffix(scheme, "http") {
			return false, true
		}
		return true, false
	}
	if before == '/' || before < utf8.RuneSelf && (isASCIILetter(byte(before)) || before >= '0' && before <= '9') || before >= utf8.RuneSelf && !isBlankRune(before) {
		return false, false
	}
	// At the start of a word: a scheme-relative address if a host follows.
	if end >= len(s) {
		return false, false
	}
	next := charAt(s, end).r
	return isHostStart(next), false
}

// isHostStart reports the characters a host name can start with. "]" is
// not one, so the defanged "[//]" stays as it is if sanitized again.
func isHostStart(r rune) bool {
	if r >= utf8.RuneSelf {
		return !isBlankRune(r)
	}
	return isASCIILetter(byte(r)) || r >= '0' && r <= '9' || r == '%' || r == '_' || r == '-'
}

// hasReversedSuffix reports whether the letters before a colon, nearest
// first in rev, end with word (so "xhttps" counts as https: a linkifier
// that starts a link mid-word still makes it an https one).
func hasReversedSuffix(rev []rune, word string) bool {
	if len(rev) < len(word) {
		return false
	}
	for k := 0; k < len(word); k++ {
		if rev[k] != rune(word[len(word)-1-k]) {
			return false
		}
	}
	return true
}

// domainShapedAt reports whether s at i starts something a linkifier could
// take for the domain of an e-mail address, read as a renderer reads it: a
// label, a dot and another label character.
func domainShapedAt(s string, i int) bool {
	isLabel := func(r rune) bool {
		return r < utf8.RuneSelf && (isASCIILetter(byte(r)) || r >= '0' && r <= '9' || r == '-' || r == '_') || r >= utf8.RuneSelf && !isBlankRune(r)
	}
	j, labels := i, 0
	for j < len(s) {
		ch := charAt(s, j)
		if !isLabel(ch.r) {
			if ch.r != '.' || labels == 0 || ch.end >= len(s) {
				return false
			}
			return isLabel(charAt(s, ch.end).r)
		}
		labels++
		j = ch.end
	}
	return false
}

// keptLinkLen returns the length of the link construct at s[i] that an
// earlier pass emitted, or 0: an http(s) autolink "<...>", the "(...)"
// target after a "]" (every other "](" was escaped), or the target after
// "]: " of a reference definition. Linkifiers keep such a URL whole, "@"
// and "//" in its path included, so it is copied as it is once
// plainHTTPURL confirms it is an http(s) URL with no user information.
func keptLinkLen(s string, i int) int {
	switch {
	case s[i] == '<':
		if n := urlSafeRun(s[i+1:]); n > 0 && i+1+n < len(s) && s[i+1+n] == '>' && plainHTTPURL(s[i+1:i+1+n]) {
			return n + 2
		}
	case s[i] != ']' || i+1 >= len(s):
	case s[i+1] == '(':
		// An escaped "]" is read as one logical character before it gets
		// here, so this one is unescaped.
		if n := urlSafeRun(s[i+2:]); n > 0 && i+2+n < len(s) && s[i+2+n] == ')' && plainHTTPURL(s[i+2:i+2+n]) {
			return n + 3
		}
	case s[i+1] == ':' && i+2 < len(s) && s[i+2] == ' ':
		if n := urlSafeRun(s[i+3:]); n > 0 && plainHTTPURL(s[i+3:i+3+n]) {
			return n + 3
		}
	}
	return 0
}

// plainHTTPURL reports whether u, a run of urlSafe bytes, is an http or
// https URL (in the lower case canonicalHTTPURL writes) whose authority is
// not empty and holds no "@".
func plainHTTPURL(u string) bool {
	var rest string
	switch {
	case strings.HasPrefix(u, "https://"):
		rest = u[len("https://"):]
	case strings.HasPrefix(u, "http://"):
		rest = u[len("http://"):]
	default:
		return false
	}
	authority := rest
	if k := strings.IndexAny(rest, "/?#"); k >= 0 {
		authority = rest[:k]
	}
	return authority != "" && !strings.Contains(authority, "@")
}

// urlSafeRun returns the length of the run of urlSafe bytes s starts with.
func urlSafeRun(s string) int {
	n := 0
	for n < len(s) && urlSafe[s[n]] {
		n++
	}
	return n
}

// isCanonicalHTTPURL reports whether s is exactly what canonicalHTTPURL
// writes for itself.
func isCanonicalHTTPURL(s string) bool {
	canon, ok := canonicalHTTPURL(s)
	return ok && canon == s
}
