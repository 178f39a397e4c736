package codeintel

import (
	"unicode/utf8"
)

// pyTokKind classifies the Python tokens the structure pass needs.
type pyTokKind uint8

const (
	pyName pyTokKind = iota
	pyOp
	pyString
	pyNumber
)

// pyTok is one token of a logical line. Comments and whitespace are not
// tokens; a string, however many physical lines it spans, is one.
type pyTok struct {
	kind pyTokKind
	// text is the operator, or the keyword a name is (pyKeywords); ""
	// for any other name, a string or a number, whose text is
	// src[start:end]. Keeping it static spares an allocation per token.
	text       string
	start, end int
	line       int // 1-based line of the first character
	endLine    int // line of the last character
	depth      int // bracket depth before the token, within its logical line
}

// pyKeywords are the names the structure pass looks for.
var pyKeywords = []string{"def", "class", "async", "lambda", "import", "from", "as",
	"if", "elif", "else", "while", "for", "try", "except", "finally", "with"}

func keywordOf(b []byte) string {
	for _, k := range pyKeywords {
		if string(b) == k {
			return k
		}
	}
	return ""
}

// opText holds the one-byte operators as static strings.
var opText = func() (t [256]string) {
	for c := 0; c < 256; c++ {
		t[c] = string(rune(c))
	}
	return t
}()

// pyLine is one logical line: a statement's tokens up to the NEWLINE that
// ends it, joined across backslash continuations and open brackets.
type pyLine struct {
	indent int // the column of the first token, tabs expanded to multiples of 8
	toks   []pyTok
}

func (l *pyLine) endLine() int { return l.toks[len(l.toks)-1].endLine }

// pyTabSize is the tab stop CPython's tokenizer uses for indentation.
const pyTabSize = 8

// forEachPyLine splits src into logical lines as CPython's tokenizer does
// and calls fn with each, in order: comments and blank lines produce
// nothing; a newline inside brackets or after a backslash continues the
// line; strings (single- and triple-quoted, with any prefix, raw or not,
// f-strings with nested replacement fields and strings) are single tokens
// whatever they contain. It never fails: malformed input (an unterminated
// string, unbalanced brackets) is tokenized as far as it goes. The line
// and its token slice are reused: fn must not keep them.
func forEachPyLine(src []byte, fn func(*pyLine)) {
	t := pyTokenizer{src: src, line: 1, each: fn}
	t.run()
}

type pyTokenizer struct {
	src   []byte
	pos   int
	line  int
	depth int
	open  bool   // a logical line is being collected in cur
	cur   pyLine // reused from line to line
	each  func(*pyLine)
}

func (t *pyTokenizer) run() {
	atLineStart := true
	for t.pos < len(t.src) {
		if atLineStart {
			atLineStart = false
			if !t.startLine() {
				atLineStart = true
				continue
			}
		}
		c := t.src[t.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\f':
			t.pos++
		case c == '\n' || c == '\r':
			t.newline()
			if t.depth == 0 {
				t.endLogical()
				atLineStart = true
			}
		case c == '#':
			t.skipComment()
		case c == '\\':
			t.pos++
			if t.pos < len(t.src) && (t.src[t.pos] == '\n' || t.src[t.pos] == '\r') {
				t.newline()
			}
		case c == '"' || c == '\'':
			t.emitString(t.pos, t.pos, nil)
		case isPyNameStart(c):
			t.nameOrString()
		case c >= '0' && c <= '9' || c == '.' && t.pos+1 < len(t.src) && isDigit(t.src[t.pos+1]):
			t.number()
		default:
			t.operator()
		}
	}
	t.endLogical()
}

// startLine measures the indentation of a physical line that may start a
// logical line. It returns false, having consumed the line, when the line
// is blank or holds only a comment.
func (t *pyTokenizer) startLine() bool {
	col := 0
	for t.pos < len(t.src) {
		switch t.src[t.pos] {
		case ' ':
			col++
		case '\t':
			col = (col/pyTabSize + 1) * pyTabSize
		case '\f':
			col = 0
		default:
			goto measured
		}
		t.pos++
	}
measured:
	if t.pos >= len(t.src) {
		return false
	}
	switch t.src[t.pos] {
	case '#':
		t.skipComment()
		if t.pos < len(t.src) {
			t.newline()
		}
		return false
	case '\n', '\r':
		t.newline()
		return false
	case '\\':
		// A continuation on an otherwise blank line joins it to the next
		// physical line, whose text then begins the logical line here.
		if t.pos+1 < len(t.src) && (t.src[t.pos+1] == '\n' || t.src[t.pos+1] == '\r') {
			t.pos++
			t.newline()
		}
	}
	t.cur.indent, t.cur.toks, t.open = col, t.cur.toks[:0], true
	return true
}

// newline consumes one line ending (\n, \r\n or \r) at pos.
func (t *pyTokenizer) newline() {
	if t.src[t.pos] == '\r' && t.pos+1 < len(t.src) && t.src[t.pos+1] == '\n' {
		t.pos++
	}
	t.pos++
	t.line++
}

func (t *pyTokenizer) endLogical() {
	if t.open && len(t.cur.toks) > 0 {
		t.each(&t.cur)
	}
	t.open = false
	t.cur.toks = t.cur.toks[:0]
	t.depth = 0
}

func (t *pyTokenizer) emit(k pyTokKind, text string, start, line int) {
	if !t.open {
		t.cur.indent, t.cur.toks, t.open = 0, t.cur.toks[:0], true
	}
	t.cur.toks = append(t.cur.toks, pyTok{kind: k, text: text, start: start, end: t.pos, line: line, endLine: t.line, depth: t.depth})
}

func (t *pyTokenizer) skipComment() {
	for t.pos < len(t.src) && t.src[t.pos] != '\n' && t.src[t.pos] != '\r' {
		t.pos++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isPyNameStart reports a byte that may start an identifier; any non-ASCII
// byte outside a string or comment can only be part of one.
func isPyNameStart(c byte) bool {
	return c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z' || c >= utf8.RuneSelf
}

func isPyNameByte(c byte) bool { return isPyNameStart(c) || isDigit(c) }

func (t *pyTokenizer) nameOrString() {
	start := t.pos
	for t.pos < len(t.src) && isPyNameByte(t.src[t.pos]) {
		t.pos++
	}
	name := t.src[start:t.pos]
	if t.pos < len(t.src) && (t.src[t.pos] == '"' || t.src[t.pos] == '\'') && isStringPrefix(name) {
		t.emitString(start, t.pos, name)
		return
	}
	t.emit(pyName, keywordOf(name), start, t.line)
}

// isStringPrefix reports the prefixes CPython accepts before a quote (any
// case and order of r with one of b, f or t, or u alone).
func isStringPrefix(p []byte) bool {
	if len(p) == 0 || len(p) > 2 {
		return false
	}
	var r, other int
	for i := 0; i < len(p); i++ {
		switch p[i] | 0x20 {
		case 'r':
			r++
		case 'b', 'f', 't':
			other++
		case 'u':
			if len(p) != 1 {
				return false
			}
			other++
		default:
			return false
		}
	}
	return r <= 1 && other <= 1
}

func (t *pyTokenizer) emitString(start, quotePos int, prefix []byte) {
	line := t.line
	raw, formatted := false, false
	for i := 0; i < len(prefix); i++ {
		switch prefix[i] | 0x20 {
		case 'r':
			raw = true
		case 'f', 't':
			formatted = true
		}
	}
	t.pos = quotePos
	t.scanString(raw, formatted)
	t.emit(pyString, "", start, line)
}

// scanString consumes a string literal starting at its opening quote.
func (t *pyTokenizer) scanString(raw, formatted bool) {
	q := t.src[t.pos]
	triple := t.pos+2 < len(t.src) && t.src[t.pos+1] == q && t.src[t.pos+2] == q
	if triple {
		t.pos += 3
	} else {
		t.pos++
	}
	for t.pos < len(t.src) {
		c := t.src[t.pos]
		switch {
		case c == '\\':
			t.pos++
			if t.pos >= len(t.src) {
				return
			}
			switch n := t.src[t.pos]; {
			case n == '\n' || n == '\r':
				t.newline()
			case formatted && n == '{':
				// A brace after a backslash still opens a field.
			case formatted && !raw && n == 'N' && t.pos+1 < len(t.src) && t.src[t.pos+1] == '{':
				// \N{NAME} is an escape, not a replacement field.
				for t.pos < len(t.src) && t.src[t.pos] != '}' && t.src[t.pos] != '\n' {
					t.pos++
				}
				if t.pos < len(t.src) && t.src[t.pos] == '}' {
					t.pos++
				}
			default:
				t.pos++
			}
		case c == q:
			if !triple {
				t.pos++
				return
			}
			if t.pos+2 < len(t.src) && t.src[t.pos+1] == q && t.src[t.pos+2] == q {
				t.pos += 3
				return
			}
			t.pos++
		case c == '\n' || c == '\r':
			if !triple {
				return // unterminated: the line ends it
			}
			t.newline()
		case formatted && c == '{':
			if t.pos+1 < len(t.src) && t.src[t.pos+1] == '{' {
				t.pos += 2
				continue
			}
			t.pos++
			if !t.scanField(q, triple) {
				return
			}
		default:
			t.pos++
		}
	}
}

// scanField consumes an f-string replacement field after its "{": an
// expression (which may hold brackets and strings of its own, PEP 701
// style), an optional !conversion and an optional format spec with nested
// fields, up to the matching "}". It returns false when the enclosing
// string ended inside the field (malformed input).
func (t *pyTokenizer) scanField(q byte, triple bool) bool {
	depth := 0
	for t.pos < len(t.src) {
		c := t.src[t.pos]
		switch {
		case c == '\n' || c == '\r':
			if !triple && depth == 0 {
				return false
			}
			t.newline()
		case c == '\'' || c == '"':
			if c == q && !triple {
				// Before PEP 701 the enclosing quote cannot appear in a
				// field; treat it as the string's end on malformed input.
				if t.pos+1 >= len(t.src) || !t.nestedQuoteAhead(q) {
					return false
				}
			}
			t.scanString(false, false)
		case isPyNameStart(c):
			start := t.pos
			for t.pos < len(t.src) && isPyNameByte(t.src[t.pos]) {
				t.pos++
			}
			if t.pos < len(t.src) && (t.src[t.pos] == '"' || t.src[t.pos] == '\'') && isStringPrefix(t.src[start:t.pos]) {
				raw, formatted := false, false
				for _, p := range t.src[start:t.pos] {
					switch p | 0x20 {
					case 'r':
						raw = true
					case 'f', 't':
						formatted = true
					}
				}
				t.scanString(raw, formatted)
			}
		case c == '(' || c == '[' || c == '{':
			depth++
			t.pos++
		case c == ')' || c == ']':
			depth--
			t.pos++
		case c == '}':
			t.pos++
			if depth == 0 {
				return true
			}
			depth--
		case c == ':' && depth == 0:
			t.pos++
			return t.scanSpec(q, triple)
		case c == '#':
			t.skipComment()
		default:
			t.pos++
		}
	}
	return false
}

// nestedQuoteAhead reports whether the quote at pos opens a nested string
// that closes before the line ends (PEP 701 reuse of the enclosing quote)
// rather than ending the enclosing string.
func (t *pyTokenizer) nestedQuoteAhead(q byte) bool {
	for i := t.pos + 1; i < len(t.src); i++ {
		switch t.src[i] {
		case q:
			return true
		case '\n', '\r':
			return false
		case '\\':
			i++
		}
	}
	return false
}

// scanSpec consumes a format spec up to the field's closing "}".
func (t *pyTokenizer) scanSpec(q byte, triple bool) bool {
	for t.pos < len(t.src) {
		c := t.src[t.pos]
		switch {
		case c == '{':
			t.pos++
			if !t.scanField(q, triple) {
				return false
			}
		case c == '}':
			t.pos++
			return true
		case c == '\n' || c == '\r':
			if !triple {
				return false
			}
			t.newline()
		case c == q && !triple:
			return false
		case c == '\\':
			t.pos += 2
		default:
			t.pos++
		}
	}
	return false
}

func (t *pyTokenizer) number() {
	line, start := t.line, t.pos
	for t.pos < len(t.src) {
		c := t.src[t.pos]
		if isPyNameByte(c) || c == '.' {
			t.pos++
			if (c == 'e' || c == 'E') && t.pos < len(t.src) && (t.src[t.pos] == '+' || t.src[t.pos] == '-') {
				t.pos++
			}
			continue
		}
		break
	}
	t.emit(pyNumber, "", start, line)
}

// pyOps are the multi-character operators that matter to the structure
// pass: ":=" and "->" must not read as ":" or "-".
var pyOps = []string{"->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!="}

func (t *pyTokenizer) operator() {
	c := t.src[t.pos]
	start := t.pos
	for _, op := range pyOps {
		if t.pos+len(op) <= len(t.src) && string(t.src[t.pos:t.pos+len(op)]) == op {
			t.pos += len(op)
			t.emit(pyOp, op, start, t.line)
			return
		}
	}
	t.pos++
	switch c {
	case '(', '[', '{':
		t.emit(pyOp, opText[c], start, t.line)
		t.depth++
	case ')', ']', '}':
		if t.depth > 0 {
			t.depth--
		}
		t.emit(pyOp, opText[c], start, t.line)
	default:
		t.emit(pyOp, opText[c], start, t.line)
	}
}
