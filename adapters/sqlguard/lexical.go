package sqlguard

import (
	"strconv"
	"strings"
)

// The lexical pass models PostgreSQL's lexer (scan.l) closely enough to know
// where every string literal, quoted identifier and comment begins and ends,
// and refuses every construct on which PostgreSQL and the CockroachDB lexer
// inside the parser could split the text differently:
//
//   - '...' strings: both read '' as a quote and a backslash as itself only
//     while standard_conforming_strings is on, so a backslash is refused.
//     PostgreSQL joins 'a' <newline> 'b' even across a -- comment, CockroachDB
//     does not: adjacent literals are refused.
//   - E'...', B'...', X'...', N'...', U&'...', U&"...": the two lexers differ
//     (CockroachDB reads x'..' and b'..' as bytes, E'' escapes through Go's
//     strconv, and has no U&). Any word directly followed by a quote is
//     refused, and so is U& before a quote.
//   - $$...$$, $tag$...$tag$ and $1: refused; parameters are named.
//   - /* /* */ */: refused rather than trusting either side's nesting rule.
//   - -- comments: PostgreSQL ends them at \r or \n, CockroachDB only at \n,
//     so a lone \r inside one is refused.
//   - 0x1F, 0o7, 0b1, 1_000, 123abc: PostgreSQL 15 and 16 disagree with each
//     other and with CockroachDB; a number that runs into a word is refused.
//   - Non-ASCII outside quotes (homoglyph semicolons, Unicode letters that
//     CockroachDB case-folds and PostgreSQL does not), control characters,
//     backslashes (psql meta-commands) and the CockroachDB-only ::: and { }.
//   - ; anywhere but as the last token.
//
// Comments are replaced by a space in the text handed to the parser, so the
// parser never sees one.

type lexMode int

const (
	// modeInput vets caller text, bounds nesting and rewrites :name.
	modeInput lexMode = iota
	// modeOutput re-checks the printer's own output: no comments, no
	// semicolon, no :name, and only $1..$n placeholders.
	modeOutput
)

type lexResult struct {
	sql    string
	params []string
	empty  bool
}

type lexer struct {
	src      string
	mode     lexMode
	maxDepth int
	nparams  int // modeOutput: highest placeholder allowed

	out    []byte
	params []string
	index  map[string]int
	tokens int
	// prevWord is the previous token when it was a bare word, else "".
	prevWord string
	// open holds the unclosed ( and [ in order.
	open []byte
}

func lexInput(src string, maxDepth int) (lexResult, error) {
	l := lexer{src: src, mode: modeInput, maxDepth: maxDepth}
	l.out = make([]byte, 0, len(src)+8)
	if err := l.run(); err != nil {
		return lexResult{}, err
	}
	return lexResult{sql: string(l.out), params: l.params, empty: l.tokens == 0}, nil
}

func checkOutput(out string, nparams int) error {
	l := lexer{src: out, mode: modeOutput, nparams: nparams}
	return l.run()
}

func (l *lexer) emit(s string) {
	if l.mode == modeInput {
		l.out = append(l.out, s...)
	}
}

func (l *lexer) emitByte(c byte) {
	if l.mode == modeInput {
		l.out = append(l.out, c)
	}
}

func (l *lexer) run() error {
	src := l.src
	n := len(src)
	if strings.IndexByte(src, 0) >= 0 {
		return refuse(reasonEncoding)
	}
	for i := 0; i < n; {
		c := src[i]
		var next byte
		if i+1 < n {
			next = src[i+1]
		}
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			l.emitByte(c)
			i++
			continue

		case c == '-' && next == '-', c == '/' && next == '*':
			if l.mode == modeOutput {
				return refuse(reasonReserialization)
			}
			j, err := skipComment(src, i)
			if err != nil {
				return err
			}
			l.emitByte(' ')
			i = j
			continue

		case c == ';':
			if l.mode == modeOutput {
				return refuse(reasonMultiple)
			}
			// Only whitespace and comments may follow the one trailing
			// semicolon. The parser's statement count is checked too.
			for j := i + 1; j < n; {
				switch d := src[j]; {
				case d == ' ' || d == '\t' || d == '\n' || d == '\r' || d == '\f':
					j++
				case d == '-' && j+1 < n && src[j+1] == '-', d == '/' && j+1 < n && src[j+1] == '*':
					k, err := skipComment(src, j)
					if err != nil {
						return err
					}
					j = k
				default:
					return refuse(reasonMultiple)
				}
			}
			i = n
			continue
		}

		l.tokens++
		word := ""
		switch {
		case c == '\'':
			j, err := scanQuoted(src, i, '\'')
			if err != nil {
				return err
			}
			if k := skipTrivia(src, j); k < n && src[k] == '\'' {
				return refuse(reasonAdjacentStrings)
			}
			l.emit(src[i:j])
			i = j

		case c == '"':
			j, err := scanQuoted(src, i, '"')
			if err != nil {
				return err
			}
			l.emit(src[i:j])
			i = j

		case c == '$':
			if l.mode == modeOutput {
				j := i + 1
				for j < n && isDigit(src[j]) {
					j++
				}
				k, err := strconv.Atoi(src[i+1 : j])
				if err != nil || k < 1 || k > l.nparams || src[i+1] == '0' {
					return refuse(reasonReserialization)
				}
				i = j
				continue
			}
			if isDigit(next) {
				return refuse(reasonPositional)
			}
			return refuse(reasonDollarQuote)

		case c == ':':
			switch {
			case next == ':':
				if i+2 < n && src[i+2] == ':' {
					return refuse(reasonTypeAnnotation)
				}
				l.emit("::")
				i += 2
			case isIdentStart(next):
				if l.mode == modeOutput {
					return refuse(reasonReserialization)
				}
				j := i + 1
				for j < n && isIdentCont(src[j]) {
					j++
				}
				if err := l.param(src[i+1 : j]); err != nil {
					return err
				}
				i = j
			default:
				l.emitByte(c)
				i++
			}

		case c == '(' || c == '[':
			if l.mode == modeInput && len(l.open) >= l.maxDepth {
				return refuse(reasonTooDeep)
			}
			l.open = append(l.open, c)
			l.emitByte(c)
			i++

		case c == ')' || c == ']':
			k := len(l.open) - 1
			if k < 0 || (c == ')') != (l.open[k] == '(') {
				return refuse(reasonUnbalanced)
			}
			l.open = l.open[:k]
			l.emitByte(c)
			i++

		case c == '*' && next == '/':
			return refuse(reasonStrayCommentEnd)

		case c == '\\':
			return refuse(reasonMetaCommand)

		case c == '{' || c == '}':
			return refuse(reasonCockroachOnly)

		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentCont(src[j]) {
				j++
			}
			if j < n {
				switch {
				case src[j] == '\'':
					return refuse(reasonPrefixedString)
				case src[j] == '&' && j == i+1 && (c == 'u' || c == 'U') &&
					j+1 < n && (src[j+1] == '\'' || src[j+1] == '"'):
					return refuse(reasonUnicodeEscape)
				}
			}
			word = src[i:j]
			// The parser drops ONLY from FROM ONLY t, which would widen
			// the read to inheritance children; ONLY is accepted only in
			// FETCH FIRST n ROWS ONLY.
			if strings.EqualFold(word, "only") &&
				!strings.EqualFold(l.prevWord, "rows") && !strings.EqualFold(l.prevWord, "row") {
				return refuse(reasonFromOnly)
			}
			l.emit(word)
			i = j

		case isDigit(c) || (c == '.' && isDigit(next)):
			j := scanNumber(src, i)
			if j < n && src[j] >= 0x80 {
				return refuse(reasonNonASCII)
			}
			if j < n && isWordByte(src[j]) {
				return refuse(reasonBadNumber)
			}
			l.emit(src[i:j])
			i = j

		case c >= 0x80:
			return refuse(reasonNonASCII)

		case c < 0x20 || c == 0x7f:
			return refuse(reasonEncoding)

		default:
			l.emitByte(c)
			i++
		}
		l.prevWord = word
	}
	if len(l.open) != 0 {
		return refuse(reasonUnbalanced)
	}
	return nil
}

// param records a named parameter and writes its positional placeholder.
func (l *lexer) param(name string) error {
	if len(name) > maxIdentBytes {
		return refuse(reasonParamName)
	}
	if l.index == nil {
		l.index = make(map[string]int)
	}
	idx, ok := l.index[name]
	if !ok {
		l.params = append(l.params, name)
		idx = len(l.params)
		l.index[name] = idx
	}
	// Keep $n from gluing onto a preceding word ("x:a" must not become the
	// identifier x$1).
	if k := len(l.out); k > 0 && (isIdentCont(l.out[k-1]) || l.out[k-1] == '$') {
		l.out = append(l.out, ' ')
	}
	l.out = append(l.out, '$')
	l.out = strconv.AppendInt(l.out, int64(idx), 10)
	return nil
}

// scanQuoted returns the index just past the literal or quoted identifier
// opening at i. A doubled quote is part of the text. A backslash in a string
// literal is refused: its meaning depends on standard_conforming_strings.
func scanQuoted(src string, i int, q byte) (int, error) {
	j := i + 1
	for {
		k := strings.IndexByte(src[j:], q)
		if k < 0 {
			return 0, refuse(reasonUnterminated)
		}
		if q == '\'' && strings.IndexByte(src[j:j+k], '\\') >= 0 {
			return 0, refuse(reasonBackslash)
		}
		j += k + 1
		if j < len(src) && src[j] == q {
			j++
			continue
		}
		return j, nil
	}
}

// skipComment returns the index just past the comment opening at i.
func skipComment(src string, i int) (int, error) {
	n := len(src)
	if src[i] == '-' {
		for j := i + 2; j < n; j++ {
			switch src[j] {
			case '\n':
				return j + 1, nil
			case '\r':
				// PostgreSQL ends the comment here, CockroachDB does not.
				if j+1 >= n || src[j+1] != '\n' {
					return 0, refuse(reasonCommentEnd)
				}
			}
		}
		return n, nil
	}
	for j := i + 2; j+1 < n; j++ {
		switch {
		case src[j] == '*' && src[j+1] == '/':
			return j + 2, nil
		case src[j] == '/' && src[j+1] == '*':
			return 0, refuse(reasonNestedComment)
		}
	}
	return 0, refuse(reasonUnterminated)
}

// skipTrivia returns the index of the next byte after i that is not
// whitespace or part of a comment. It never fails: a malformed comment stops
// the skip, and the main loop refuses it when it gets there.
func skipTrivia(src string, i int) int {
	n := len(src)
	for i < n {
		switch c := src[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < n && src[i+1] == '-', c == '/' && i+1 < n && src[i+1] == '*':
			j, err := skipComment(src, i)
			if err != nil {
				return i
			}
			i = j
		default:
			return i
		}
	}
	return i
}

// scanNumber returns the index just past the numeric literal at i:
// digits [. digits] [e [+-] digits], or . digits [e ...].
func scanNumber(src string, i int) int {
	n := len(src)
	j := i
	for j < n && isDigit(src[j]) {
		j++
	}
	if j < n && src[j] == '.' && (j+1 >= n || src[j+1] != '.') {
		j++
		for j < n && isDigit(src[j]) {
			j++
		}
	}
	if j < n && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < n && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < n && isDigit(src[k]) {
			j = k
			for j < n && isDigit(src[j]) {
				j++
			}
		}
	}
	return j
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentCont(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// isWordByte reports whether c could continue a word in either lexer.
func isWordByte(c byte) bool { return isIdentCont(c) || c == '$' || c >= 0x80 }
