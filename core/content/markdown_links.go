package content

import (
	"sort"
	"strings"
)

// This file is the Markdown side of SanitizeMarkdown: one pass that
// rewrites every link, image and reference definition.

// maxLinkParens bounds unescaped parenthesis nesting in a link target, as
// CommonMark allows implementations to.
const maxLinkParens = 32

// linkParseBudgetFactor bounds the total bytes the link-tail parsers may
// examine to this multiple of the document size (plus linkParseBudgetSlack),
// so a document crafted to make every candidate rescan the same text stays
// linear. When the budget runs out, remaining candidates are treated as
// unparseable, which escapes them: safe, only less faithful.
const (
	linkParseBudgetFactor = 8
	linkParseBudgetSlack  = 4096
)

// nextOf finds the next occurrence of any of a few bytes in s for
// increasing positions. Each byte's next position is found with
// strings.IndexByte (vectorized) and remembered until passed, so the whole
// text is searched about once per byte value: far faster than testing every
// byte when the bytes sought are rare, as brackets are in prose.
type nextOf struct {
	s     string
	chars string
	at    [8]int // next known position of chars[k], or -1 for none left
}

func newNextOf(s, chars string) *nextOf {
	n := &nextOf{s: s, chars: chars}
	for k := range chars {
		n.at[k] = n.find(k, 0)
	}
	return n
}

func (n *nextOf) find(k, p int) int {
	if j := strings.IndexByte(n.s[p:], n.chars[k]); j >= 0 {
		return p + j
	}
	return -1
}

// index returns the first position at or after p holding one of the bytes,
// or -1. Calls must not go backwards.
func (n *nextOf) index(p int) int {
	best := -1
	for k := range n.chars {
		at := n.at[k]
		if at >= 0 && at < p {
			at = n.find(k, p)
			n.at[k] = at
		}
		if at >= 0 && (best < 0 || at < best) {
			best = at
		}
	}
	return best
}

// mdOpener is an unescaped '[' and the ']' that closes it (-1 if none),
// paired like nested parentheses within a paragraph.
type mdOpener struct{ pos, close int }

// scanBrackets pairs unescaped brackets (a blank line closes every open
// one) and lists the positions of unescaped "![".
func scanBrackets(s string) (openers []mdOpener, images []int) {
	var stack []int
	next := newNextOf(s, "\\[]!\n")
	for i := 0; i < len(s); i++ {
		if i = next.index(i); i < 0 {
			break
		}
		switch s[i] {
		case '\\':
			if i+1 < len(s) && isASCIIPunct(s[i+1]) {
				i++
			}
		case '[':
			stack = append(stack, len(openers))
			openers = append(openers, mdOpener{pos: i, close: -1})
		case ']':
			if n := len(stack); n > 0 {
				openers[stack[n-1]].close = i
				stack = stack[:n-1]
			}
		case '!':
			if i+1 < len(s) && s[i+1] == '[' {
				images = append(images, i)
			}
		case '\n':
			if blankLineAfter(s, i) {
				stack = stack[:0]
			}
		}
	}
	return openers, images
}

// normLabel normalizes a link label for matching, as CommonMark does:
// surrounding whitespace trimmed, inner runs collapsed, case folded.
func normLabel(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

type closeMode int

const (
	keepLink   closeMode = iota // emit "](canonical)" and skip the tail
	dropLink                    // emit nothing and skip the tail
	escapeTail                  // emit "]\" so the tail is plain text
)

type pendingClose struct {
	close, end int
	mode       closeMode
	canon      string
}

// linkRewriter is one pass over the text that rewrites every link, image
// and reference definition. It reads the input and writes out; positions
// always refer to the input.
type linkRewriter struct {
	s           string
	out         []byte
	openers     []mdOpener
	imageLabels map[string]struct{}
	pending     []pendingClose
	// junction is set when something was removed: the next write checks
	// that the bytes on either side do not form "](", "]:", "][" or "![".
	junction bool
	// containerLine reports whether the output line so far holds only
	// indentation and container markers; it is kept up to date by write
	// so that checking it never rescans a long line.
	containerLine bool
	budget        int
}

func rewriteLinks(s string) string {
	if !strings.ContainsAny(s, "[]") {
		return s
	}
	openers, images := scanBrackets(s)
	r := &linkRewriter{
		s:             s,
		out:           make([]byte, 0, len(s)+64),
		openers:       openers,
		containerLine: true,
		budget:        linkParseBudgetFactor*len(s) + linkParseBudgetSlack,
	}
	r.collectImageLabels(images)
	next := newNextOf(s, "\\![]")
	for i := 0; i < len(s); {
		k := next.index(i)
		if k < 0 {
			r.write(s[i:])
			break
		}
		r.write(s[i:k])
		i = k
		switch s[i] {
		case '\\':
			if i+1 < len(s) && isASCIIPunct(s[i+1]) {
				r.write(s[i : i+2])
				i += 2
			} else {
				r.write(`\`)
				i++
			}
		case '!':
			if i+1 < len(s) && s[i+1] == '[' {
				i = r.image(i)
			} else {
				r.write("!")
				i++
			}
		case '[':
			i = r.open(i)
		case ']':
			i = r.close(i)
		}
	}
	return string(r.out)
}

// opener returns the bracket pair opening at pos, or nil.
func (r *linkRewriter) opener(pos int) *mdOpener {
	k := sort.Search(len(r.openers), func(k int) bool { return r.openers[k].pos >= pos })
	if k < len(r.openers) && r.openers[k].pos == pos {
		return &r.openers[k]
	}
	return nil
}

// collectImageLabels records the labels image references may use, so the
// definitions behind them can be dropped with the images. A label holds no
// unescaped brackets, so bracketed alt text is never one; skipping it also
// keeps nested images from being rescanned.
func (r *linkRewriter) collectImageLabels(images []int) {
	add := func(open, close int) {
		if r.bracketInside(open, close) {
			return
		}
		if label := normLabel(r.s[open+1 : close]); label != "" {
			if r.imageLabels == nil {
				r.imageLabels = make(map[string]struct{})
			}
			r.imageLabels[label] = struct{}{}
		}
	}
	for _, p := range images {
		op := r.opener(p + 1)
		if op == nil || op.close < 0 {
			continue
		}
		add(op.pos, op.close)
		if m := op.close; m+1 < len(r.s) && r.s[m+1] == '[' {
			if ref := r.opener(m + 1); ref != nil && ref.close >= 0 {
				add(ref.pos, ref.close)
			}
		}
	}
}

func (r *linkRewriter) write(s string) {
	if s == "" {
		return
	}
	if r.junction {
		r.junction = false
		if n := len(r.out); n > 0 && !escapedAt(r.out, n-1) {
			last, next := r.out[n-1], s[0]
			if last == ']' && (next == '(' || next == ':' || next == '[') || last == '!' && next == '[' {
				r.out = append(r.out, '\\')
			}
		}
	}
	r.out = append(r.out, s...)
	if k := strings.LastIndexByte(s, '\n'); k >= 0 {
		r.containerLine = true
		s = s[k+1:]
	}
	for i := 0; r.containerLine && i < len(s); i++ {
		r.containerLine = isContainerByte(s[i])
	}
}

// drop records that text was removed at this point.
func (r *linkRewriter) drop() { r.junction = true }

// escapedAt reports whether b[i] is preceded by an odd run of backslashes.
func escapedAt(b []byte, i int) bool {
	n := 0
	for i--; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// image handles "![" at i and returns where to resume.
func (r *linkRewriter) image(i int) int {
	s := r.s
	op := r.opener(i + 1)
	if op == nil || op.close < 0 {
		// Unmatched: make sure no renderer can start an image here.
		r.write(`!\[`)
		return i + 2
	}
	m := op.close
	end := m + 1
	if m+1 < len(s) {
		switch s[m+1] {
		case '(':
			if _, e, ok := r.parseInlineTail(m + 1); ok {
				end = e
			}
		case '[':
			if ref := r.opener(m + 1); ref != nil && ref.close >= 0 {
				end = ref.close + 1
			}
		}
	}
	r.drop()
	return end
}

// open handles an unescaped '[' that does not follow '!'.
func (r *linkRewriter) open(i int) int {
	s := r.s
	op := r.opener(i)
	if op == nil || op.close < 0 || op.close+1 >= len(s) {
		r.write("[")
		return i + 1
	}
	m := op.close
	switch s[m+1] {
	case '(':
		target, end, ok := r.parseInlineTail(m + 1)
		if !ok {
			// Not a link to this parser; close() escapes the "](".
			r.write("[")
			return i + 1
		}
		if canon, good := canonicalHTTPURL(decodeLinkTarget(target)); good {
			r.pending = append(r.pending, pendingClose{close: m, end: end, mode: keepLink, canon: canon})
			r.write("[")
		} else {
			r.pending = append(r.pending, pendingClose{close: m, end: end, mode: dropLink})
			r.drop()
		}
		return i + 1
	case ':':
		if !r.atBlockStart() {
			r.write("[")
			return i + 1
		}
		target, end, ok := r.parseDefinitionTail(m + 2)
		if !ok || r.bracketInside(i, m) || strings.HasPrefix(s[i+1:m], "^") {
			// A "^" label is a GFM footnote definition, whose references
			// render as same-page links: it stays as text.
			// Not a definition to this parser (a label may not hold
			// brackets); close() escapes the "]:".
			r.pending = append(r.pending, pendingClose{close: m, mode: escapeTail})
			r.write("[")
			return i + 1
		}
		label := s[i+1 : m]
		if _, usedByImage := r.imageLabels[normLabel(label)]; !usedByImage {
			if canon, good := canonicalHTTPURL(decodeLinkTarget(target)); good {
				r.write("[")
				r.write(label)
				r.write("]: ")
				r.write(canon)
				return end
			}
		}
		r.drop()
		return end
	}
	r.write("[")
	return i + 1
}

// bracketInside reports whether an unescaped bracket lies strictly between
// the pair at open and close. Any ']' in there closes a '[' in there, so
// looking for an opener is enough, and it takes a binary search rather
// than a rescan of text a nested pair may already have covered.
func (r *linkRewriter) bracketInside(open, close int) bool {
	k := sort.Search(len(r.openers), func(k int) bool { return r.openers[k].pos > open })
	return k < len(r.openers) && r.openers[k].pos < close
}

// close handles an unescaped ']'.
func (r *linkRewriter) close(i int) int {
	for n := len(r.pending); n > 0 && r.pending[n-1].close < i; n-- {
		// A removal (an image, a target) skipped this closer.
		r.pending = r.pending[:n-1]
	}
	if n := len(r.pending); n > 0 && r.pending[n-1].close == i {
		p := r.pending[n-1]
		r.pending = r.pending[:n-1]
		switch p.mode {
		case keepLink:
			r.write("](")
			r.write(p.canon)
			r.write(")")
			return p.end
		case dropLink:
			r.drop()
			return p.end
		case escapeTail:
			r.write(`]\`)
			return i + 1
		}
	}
	if i+1 < len(r.s) && r.s[i+1] == '(' {
		r.write(`]\`)
		return i + 1
	}
	r.write("]")
	return i + 1
}

// atBlockStart reports whether the output line so far holds only
// indentation and container markers (block quotes, list items), where a
// link reference definition can begin.
func (r *linkRewriter) atBlockStart() bool { return r.containerLine }

// isContainerByte reports the bytes of indentation and of block quote and
// list item markers.
func isContainerByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '>' || c == '-' || c == '+' || c == '*' || c == '.' || c == ')' || c >= '0' && c <= '9'
}

// spend charges n bytes of parsing to the budget and reports whether the
// budget still holds.
func (r *linkRewriter) spend(n int) bool {
	r.budget -= n
	return r.budget >= 0
}

// skipSpace skips spaces and tabs and, if newline is set, at most one line
// ending (not a blank line).
func (r *linkRewriter) skipSpace(i int, newline bool) int {
	s := r.s
	for i < len(s) {
		switch s[i] {
		case ' ', '\t':
			i++
		case '\n':
			if !newline || blankLineAfter(s, i) {
				return i
			}
			newline = false
			i++
		default:
			return i
		}
	}
	return i
}

// parseInlineTail parses "(target "title")" at s[p] == '(' by CommonMark's
// rules and returns the raw target and the index after ')'.
func (r *linkRewriter) parseInlineTail(p int) (target string, end int, ok bool) {
	s := r.s
	i := r.skipSpace(p+1, true)
	if i < len(s) && s[i] == ')' {
		return "", i + 1, r.spend(i + 1 - p)
	}
	target, i, ok = r.parseTarget(i)
	if !ok {
		return "", 0, false
	}
	j := r.skipSpace(i, true)
	if j < len(s) && s[j] == ')' {
		return target, j + 1, r.spend(j + 1 - p)
	}
	if j == i || j >= len(s) || s[j] != '"' && s[j] != '\'' && s[j] != '(' {
		// A title must be separated from the target, and quoted.
		return "", 0, false
	}
	if j, ok = r.parseTitle(j); !ok {
		return "", 0, false
	}
	j = r.skipSpace(j, true)
	if j < len(s) && s[j] == ')' {
		return target, j + 1, r.spend(j + 1 - p)
	}
	return "", 0, false
}

// parseDefinitionTail parses what follows "[label]:" in a link reference
// definition: a target, then an optional title on the same or the next
// line, then only blanks to the end of the line. It returns the index of
// the line ending (or the end of text) that closes the definition.
func (r *linkRewriter) parseDefinitionTail(p int) (target string, end int, ok bool) {
	s := r.s
	i := r.skipSpace(p, true)
	if i >= len(s) || s[i] == '\n' {
		return "", 0, false
	}
	target, i, ok = r.parseTarget(i)
	if !ok {
		return "", 0, false
	}
	lineEnd := lineEndAt(s, i)
	if isBlank(s[i:lineEnd]) {
		end = lineEnd
		if lineEnd < len(s) {
			// A title may sit on the next line.
			t := r.skipSpace(lineEnd+1, false)
			if t < len(s) && (s[t] == '"' || s[t] == '\'' || s[t] == '(') {
				if te, ok := r.parseTitle(t); ok {
					if le := lineEndAt(s, te); isBlank(s[te:le]) {
						end = le
					}
				}
			}
		}
		return target, end, r.spend(end - p)
	}
	if s[i] == ' ' || s[i] == '\t' {
		t := r.skipSpace(i, false)
		if t < len(s) && (s[t] == '"' || s[t] == '\'' || s[t] == '(') {
			if te, ok := r.parseTitle(t); ok {
				if le := lineEndAt(s, te); isBlank(s[te:le]) {
					return target, le, r.spend(le - p)
				}
			}
		}
	}
	return "", 0, false
}

func lineEndAt(s string, i int) int {
	if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
		return i + k
	}
	return len(s)
}

func isBlank(s string) bool { return strings.Trim(s, " \t") == "" }

// parseTarget parses a link target at s[i]: <...> (no line ending, no
// unescaped '<') or a run without spaces or controls whose unescaped
// parentheses balance.
func (r *linkRewriter) parseTarget(i int) (target string, end int, ok bool) {
	s := r.s
	if r.budget < 0 || i >= len(s) {
		return "", 0, false
	}
	if s[i] == '<' {
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				if j+1 < len(s) && isASCIIPunct(s[j+1]) {
					j++
				}
			case '\n', '<':
				r.spend(j - i)
				return "", 0, false
			case '>':
				return s[i+1 : j], j + 1, r.spend(j + 1 - i)
			}
		}
		r.spend(len(s) - i)
		return "", 0, false
	}
	depth, j := 0, i
scan:
	for j < len(s) {
		switch c := s[j]; {
		case c <= ' ' || c == 0x7f:
			break scan
		case c == '\\' && j+1 < len(s) && isASCIIPunct(s[j+1]):
			j += 2
			continue
		case c == '(':
			if depth++; depth > maxLinkParens {
				r.spend(j - i)
				return "", 0, false
			}
		case c == ')':
			if depth == 0 {
				break scan
			}
			depth--
		}
		j++
	}
	if !r.spend(j-i) || j == i || depth != 0 {
		return "", 0, false
	}
	return s[i:j], j, true
}

// parseTitle parses a link title at s[i]: "...", '...' or (...), which may
// span lines but not a blank line.
func (r *linkRewriter) parseTitle(i int) (end int, ok bool) {
	s := r.s
	if r.budget < 0 {
		return 0, false
	}
	closer := s[i]
	if closer == '(' {
		closer = ')'
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\\' && j+1 < len(s) && isASCIIPunct(s[j+1]):
			j++
		case c == closer:
			return j + 1, r.spend(j + 1 - i)
		case c == '(' && closer == ')':
			r.spend(j - i)
			return 0, false
		case c == '\n' && blankLineAfter(s, j):
			r.spend(j - i)
			return 0, false
		}
	}
	r.spend(len(s) - i)
	return 0, false
}
