package content

import "strings"

// This file is the HTML side of SanitizeMarkdown: removing raw HTML
// constructs and autolinks, and the final pass that escapes anything left
// that could still open a tag.

// maxSchemeLen is the longest autolink scheme CommonMark accepts.
const maxSchemeLen = 32

// isHTMLSpace reports the whitespace that separates HTML attributes.
func isHTMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' }

// memoIndex answers "first index of pat at or after p" for mostly increasing
// p without rescanning text already searched, keeping repeated searches for
// a terminator that is far away (or absent) linear overall.
type memoIndex struct {
	s, pat string
	from   int // the last search started here
	at     int // and found pat here, or -1
	valid  bool
}

func (m *memoIndex) next(p int) int {
	if m.valid && p >= m.from && (m.at < 0 || p <= m.at) {
		return m.at
	}
	m.valid, m.from = true, p
	if p > len(m.s) {
		m.at = -1
		return -1
	}
	if k := strings.Index(m.s[p:], m.pat); k >= 0 {
		m.at = p + k
	} else {
		m.at = -1
	}
	return m.at
}

// htmlStripper removes raw HTML. Removal is for fidelity (markup does not
// reach the model as text); safety against tags comes from
// escapeTagOpeners, which runs last over the finished text.
type htmlStripper struct {
	s                                       string
	commentEnd, cdataEnd, piEnd, gt, dq, sq memoIndex
}

func stripHTML(s string) string {
	i := strings.IndexByte(s, '<')
	if i < 0 {
		return s
	}
	h := htmlStripper{s: s}
	for _, m := range []*memoIndex{&h.commentEnd, &h.cdataEnd, &h.piEnd, &h.gt, &h.dq, &h.sq} {
		m.s = s
	}
	h.commentEnd.pat, h.cdataEnd.pat, h.piEnd.pat = "-->", "]]>", "?>"
	h.gt.pat, h.dq.pat, h.sq.pat = ">", `"`, "'"
	var out strings.Builder
	out.Grow(len(s))
	last := 0
	for i < len(s) {
		end, repl, ok := h.construct(i)
		if ok {
			out.WriteString(s[last:i])
			out.WriteString(repl)
			last = end
		}
		i = end
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			break
		}
		i += j
	}
	out.WriteString(s[last:])
	return out.String()
}

// construct examines the '<' at s[i]. When it starts a construct it returns
// the construct's end and the text to put in its place; otherwise it returns
// where to look for the next '<' (past any region a failed tag scan covered,
// which keeps the scan linear; escapeTagOpeners deals with what is left).
func (h *htmlStripper) construct(i int) (end int, repl string, ok bool) {
	s := h.s
	if i+1 >= len(s) {
		return i + 1, "", false
	}
	c := s[i+1]
	switch {
	case isASCIILetter(c):
		if end, inner, ok := uriAutolink(s, i); ok {
			if canon, good := canonicalHTTPURL(inner); good {
				return end, "<" + canon + ">", true
			}
			// Any other scheme: the address stays as text, not a link.
			return end, inner, true
		}
		if end, inner, ok := emailAutolink(s, i); ok {
			return end, inner, true
		}
		return h.tag(i)
	case c == '/':
		return h.tag(i)
	case c == '!':
		switch {
		case strings.HasPrefix(s[i:], "<!--"):
			// From i+2 so that "<!-->" and "<!--->" end where HTML ends them.
			if k := h.commentEnd.next(i + 2); k >= 0 {
				return k + 3, "", true
			}
		case strings.HasPrefix(s[i:], "<![CDATA["):
			if k := h.cdataEnd.next(i + 9); k >= 0 {
				return k + 3, "", true
			}
			if k := h.gt.next(i + 9); k >= 0 {
				return k + 1, "", true
			}
		default:
			if k := h.gt.next(i + 2); k >= 0 {
				return k + 1, "", true
			}
		}
	case c == '?':
		if k := h.piEnd.next(i + 2); k >= 0 {
			return k + 2, "", true
		}
		if k := h.gt.next(i + 2); k >= 0 {
			return k + 1, "", true
		}
	}
	return i + 1, "", false
}

// tag scans an opening or closing tag the way an HTML tokenizer does:
// attribute values in quotes may hold '>', unquoted ones end at whitespace
// or '>'. A tag may span lines but not a blank line (where a Markdown
// renderer would have stopped treating it as one).
func (h *htmlStripper) tag(i int) (end int, repl string, ok bool) {
	s := h.s
	j := i + 1
	if s[j] == '/' {
		j++
	}
	for j < len(s) {
		c := s[j]
		switch {
		case c == '>':
			return j + 1, "", true
		case c == '\n':
			if blankLineAfter(s, j) {
				return j, "", false
			}
			j++
		case c == '=':
			j++
			for j < len(s) && isHTMLSpace(s[j]) && (s[j] != '\n' || !blankLineAfter(s, j)) {
				j++
			}
			if j < len(s) && (s[j] == '"' || s[j] == '\'') {
				q := &h.dq
				if s[j] == '\'' {
					q = &h.sq
				}
				k := q.next(j + 1)
				if k < 0 || strings.Contains(s[j+1:k], "\n") && hasBlankLine(s[j:k]) {
					return j + 1, "", false
				}
				j = k + 1
			}
		default:
			j++
		}
	}
	return j, "", false
}

// hasBlankLine reports whether s contains a line of only spaces and tabs
// between two newlines.
func hasBlankLine(s string) bool {
	for i := strings.IndexByte(s, '\n'); i >= 0; {
		j := i + 1
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j < len(s) && s[j] == '\n' {
			return true
		}
		k := strings.IndexByte(s[j:], '\n')
		if k < 0 {
			return false
		}
		i = j + k
	}
	return false
}

// uriAutolink matches a CommonMark URI autolink at s[i] == '<': a scheme of
// 2 to 32 characters, a colon, then anything but space, controls, '<' and
// '>', then '>'.
func uriAutolink(s string, i int) (end int, inner string, ok bool) {
	j := i + 1
	for j < len(s) && j-(i+1) <= maxSchemeLen && (isASCIILetter(s[j]) || s[j] >= '0' && s[j] <= '9' || s[j] == '+' || s[j] == '.' || s[j] == '-') {
		j++
	}
	if n := j - (i + 1); n < 2 || n > maxSchemeLen || j >= len(s) || s[j] != ':' {
		return 0, "", false
	}
	for j++; j < len(s); j++ {
		switch c := s[j]; {
		case c == '>':
			return j + 1, s[i+1 : j], true
		case c <= ' ' || c == '<' || c == 0x7f:
			return 0, "", false
		}
	}
	return 0, "", false
}

// emailAutolink matches <local@domain> at s[i] == '<'.
func emailAutolink(s string, i int) (end int, inner string, ok bool) {
	j := i + 1
	for j < len(s) && (isASCIILetter(s[j]) || s[j] >= '0' && s[j] <= '9' || strings.IndexByte(".!#$%&'*+/=?^_`{|}~-", s[j]) >= 0) {
		j++
	}
	if j == i+1 || j >= len(s) || s[j] != '@' {
		return 0, "", false
	}
	at := j
	for j++; j < len(s) && (isASCIILetter(s[j]) || s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == '-'); j++ {
	}
	if j == at+1 || j >= len(s) || s[j] != '>' {
		return 0, "", false
	}
	return j + 1, s[i+1 : j], true
}

// escapeTagOpeners writes every '<' that could open markup (followed by a
// letter, '/', '!' or '?') as "&lt;", except the canonical http(s)
// autolinks this package emits. It runs last, so no tag can exist in the
// output whatever the earlier passes removed or joined.
func escapeTagOpeners(s string) string {
	i := strings.IndexByte(s, '<')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	last := 0
	for {
		if i+1 < len(s) && (isASCIILetter(s[i+1]) || s[i+1] == '/' || s[i+1] == '!' || s[i+1] == '?') {
			if n := canonicalAutolinkLen(s[i:]); n > 0 {
				i += n
			} else {
				b.WriteString(s[last:i])
				b.WriteString("&lt;")
				i++
				last = i
			}
		} else {
			i++
		}
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			break
		}
		i += j
	}
	b.WriteString(s[last:])
	return b.String()
}

// canonicalAutolinkLen returns the length of the canonical http(s) autolink
// that s starts with (one whose URL canonicalHTTPURL leaves unchanged), or
// 0.
func canonicalAutolinkLen(s string) int {
	var j int
	switch {
	case strings.HasPrefix(s, "<http://"):
		j = len("<http://")
	case strings.HasPrefix(s, "<https://"):
		j = len("<https://")
	default:
		return 0
	}
	for ; j < len(s); j++ {
		if s[j] == '>' {
			// Removing a construct can assemble "<https://...>" from text
			// that was never an autolink: only a canonical URL stays one.
			if !isCanonicalHTTPURL(s[1:j]) {
				return 0
			}
			return j + 1
		}
		if !urlSafe[s[j]] {
			return 0
		}
	}
	return 0
}
