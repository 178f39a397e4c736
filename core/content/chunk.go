package content

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chunking splits a document into bounded pieces for embedding. Sizes are
// counted in characters (runes), as ARROWHEAD_VECTOR_INDEX_CHUNK_MAX_CHARS
// and ARROWHEAD_CODE_CHUNK_MAX_CHARS are; a cut never falls inside a UTF-8
// sequence (an invalid byte counts as one character and is kept as is).
// Chunks are substrings of the input: chunking copies nothing, and it does
// not sanitize; callers chunk text that already went through SanitizeText.
//
// Every function here is deterministic: the same input and limits give the
// same chunks on every run, which is what lets a re-index compare content
// hashes chunk by chunk.

// ChunkSettings selects the windows ChunkFor uses. The wiring fills it from
// ARROWHEAD_VECTOR_INDEX_CHUNK_MAX_CHARS, ARROWHEAD_VECTOR_INDEX_CHUNK_OVERLAP
// and ARROWHEAD_CODE_CHUNK_MAX_CHARS.
type ChunkSettings struct {
	// TextMaxChars bounds a prose chunk.
	TextMaxChars int
	// TextOverlap is how many characters of one prose chunk are repeated at
	// the start of the next.
	TextOverlap int
	// CodeMaxChars bounds a source-file chunk (the wider window).
	CodeMaxChars int
	// MaxChunks, when positive, stops chunking after that many chunks. Pass
	// one more than a budget to learn whether a document exceeds it without
	// chunking all of it.
	MaxChunks int
}

// codeExtensions route a file to ChunkCode. The list is the issue's, plus
// .hpp and .pyi, which the original routed to its code chunker too.
var codeExtensions = map[string]struct{}{
	".go": {}, ".py": {}, ".pyi": {}, ".js": {}, ".ts": {}, ".tsx": {}, ".jsx": {},
	".java": {}, ".c": {}, ".h": {}, ".cpp": {}, ".hpp": {}, ".rs": {}, ".rb": {},
	".kt": {}, ".scala": {}, ".swift": {}, ".cs": {}, ".php": {}, ".sh": {},
}

// IsCodePath reports whether a corpus path names a source file, by its
// extension (case-insensitive).
func IsCodePath(p string) bool {
	_, ok := codeExtensions[strings.ToLower(path.Ext(p))]
	return ok
}

// ChunkFor chunks a document the way its path calls for: source files
// along their structure with s.CodeMaxChars (ChunkCode), everything else as
// prose with s.TextMaxChars and s.TextOverlap (ChunkText). The window for
// the chosen kind must be positive, as for those functions.
func ChunkFor(p, text string, s ChunkSettings) []string {
	if IsCodePath(p) {
		return chunkCode(text, s.CodeMaxChars, s.MaxChunks)
	}
	return chunkText(text, s.TextMaxChars, s.TextOverlap, s.MaxChunks)
}

// ChunkText splits prose into windows of at most maxChars characters. Each
// window ends at the best boundary in its second part: after the last blank
// line (a paragraph), else after the last line break, else after the last
// sentence end (".", "!" or "?" then a space or tab; or an ideographic
// full stop, exclamation or question mark), else after the last whitespace
// (a word), else exactly at maxChars. "Second part" means the chunk keeps
// at least overlap characters plus half of (maxChars - overlap), so a
// boundary near a window's start cannot shrink chunks to slivers and every
// chunk advances through the text.
//
// The next window starts exactly overlap characters before the previous
// one ended, so removing the first overlap characters of every chunk but
// the first and concatenating gives back the text. The one exception: a
// window holding nothing but whitespace (inside a run of blank space
// longer than half a window, or a whitespace tail left after the last
// cut) is dropped, so no chunk is empty or blank and only whitespace is
// ever lost.
//
// overlap is clamped to 0..maxChars-1. maxChars below 1 is a programming
// error (settings validation rules it out) and panics.
func ChunkText(text string, maxChars, overlap int) []string {
	return chunkText(text, maxChars, overlap, 0)
}

// ChunkCode splits a source file into chunks of at most maxChars
// characters that follow its top-level structure, so a function travels
// with its signature and doc comment instead of being cut mid-body.
//
// The file is first cut into blocks, each starting at a top-level
// declaration: a line at column 0 that starts one (see chunkIsDecl for the
// heuristics: Go func/type/var/const, Python def/class, JS/TS
// function/class/export, Rust fn/impl/struct, Java/C#/Kotlin/Swift
// modifiers and class-like keywords, and C-family or shell signatures: an
// identifier at column 0 with a parenthesis on a line not ending in ';'),
// provided the line before it is blank, a column-0 closing line ("}",
// "};", "end") or the start of the file. Comment, decorator, annotation
// and attribute lines at column 0 directly above the declaration belong
// to its block. Then consecutive blocks are merged greedily while they fit
// in maxChars, and a block larger than maxChars is split with the
// ChunkText boundaries, without overlap; the last piece of a split block
// counts as a block of its own for merging, so a short tail shares a
// chunk with the declarations after it when they fit.
//
// Concatenating the chunks gives back the file, except that a chunk of
// nothing but whitespace (possible only where a block had to be split) is
// dropped as in ChunkText. maxChars below 1 panics.
func ChunkCode(text string, maxChars int) []string {
	return chunkCode(text, maxChars, 0)
}

// chunkText collects ChunkText's non-blank windows, at most limit of them
// when limit > 0.
func chunkText(text string, maxChars, overlap, limit int) []string {
	var out []string
	chunkWindows(text, maxChars, overlap, func(start, end int) bool {
		if c := text[start:end]; !chunkBlank(c) {
			out = append(out, c)
		}
		return limit <= 0 || len(out) < limit
	})
	return out
}

// chunkCode collects ChunkCode's non-blank chunks, at most limit of them
// when limit > 0.
func chunkCode(text string, maxChars, limit int) []string {
	var out []string
	chunkCodeSpans(text, maxChars, func(start, end int) bool {
		if c := text[start:end]; !chunkBlank(c) {
			out = append(out, c)
		}
		return limit <= 0 || len(out) < limit
	})
	return out
}

// chunkWindows calls emit with the byte span of every window of text, in
// order, until emit returns false. Blank windows are emitted too: callers
// decide what to keep.
func chunkWindows(text string, maxChars, overlap int, emit func(start, end int) bool) {
	if maxChars < 1 {
		panic("content: chunk size must be at least one character")
	}
	overlap = min(max(overlap, 0), maxChars-1)
	// The shortest chunk a boundary may produce: the overlap it hands on
	// plus at least half a nominal step of new text.
	minChars := overlap + max(1, (maxChars-overlap)/2)
	for start := 0; start < len(text); {
		end, n := start, 0
		for n < maxChars && end < len(text) {
			if text[end] < utf8.RuneSelf {
				end++
			} else {
				_, size := utf8.DecodeRuneInString(text[end:])
				end += size
			}
			n++
		}
		if end == len(text) {
			emit(start, end)
			return
		}
		end = chunkBreak(text, start, end, n, minChars)
		if !emit(start, end) {
			return
		}
		start = chunkBack(text, start, end, overlap)
	}
}

// Boundary levels, best first.
const (
	chunkParagraph = iota
	chunkLine
	chunkSentence
	chunkWord
	chunkLevels
)

// chunkBreak picks where the window text[start:end] (n characters) ends:
// the rightmost boundary of the best level among positions leaving at
// least minChars characters in the chunk, or end itself when there is
// none.
func chunkBreak(text string, start, end, n, minChars int) int {
	var best [chunkLevels]int
	for p, c := end, n; c >= minChars && p > start; c-- {
		if level := chunkLevelAt(text, start, p); level < chunkLevels && best[level] == 0 {
			if level == chunkParagraph {
				return p
			}
			best[level] = p
		}
		p = chunkPrev(text, start, p)
	}
	for _, p := range best {
		if p > 0 {
			return p
		}
	}
	return end
}

// chunkLevelAt classifies the position p (start < p) as the end of a
// chunk: the best boundary that ends exactly there, or chunkLevels for
// none. The separator stays with the chunk it ends.
func chunkLevelAt(text string, start, p int) int {
	if text[p-1] == '\n' {
		// A paragraph ends with a blank line: another newline with only
		// spaces and tabs between, inside the window.
		for i := p - 2; i >= start; i-- {
			switch text[i] {
			case ' ', '\t':
				continue
			case '\n':
				return chunkParagraph
			}
			break
		}
		return chunkLine
	}
	r := rune(text[p-1])
	if r >= utf8.RuneSelf {
		r, _ = utf8.DecodeLastRuneInString(text[start:p])
	}
	switch {
	case r == '。' || r == '！' || r == '？':
		return chunkSentence
	case (r == ' ' || r == '\t') && p-2 >= start && strings.IndexByte(".!?", text[p-2]) >= 0:
		return chunkSentence
	case unicode.IsSpace(r):
		return chunkWord
	}
	return chunkLevels
}

// chunkBack returns the position overlap characters before end (not before
// start).
func chunkBack(text string, start, end, overlap int) int {
	for ; overlap > 0 && end > start; overlap-- {
		end = chunkPrev(text, start, end)
	}
	return end
}

// chunkPrev returns the start of the character ending at p (p > start),
// not looking before start.
func chunkPrev(text string, start, p int) int {
	if text[p-1] < utf8.RuneSelf {
		return p - 1
	}
	_, size := utf8.DecodeLastRuneInString(text[start:p])
	return p - size
}

// chunkBlank reports whether s holds only whitespace.
func chunkBlank(s string) bool {
	return strings.TrimSpace(s) == ""
}

// chunkCodeSpans calls emit with the byte span of every code chunk, in
// order, until emit returns false. Spans tile the text exactly.
func chunkCodeSpans(text string, maxChars int, emit func(start, end int) bool) {
	if maxChars < 1 {
		panic("content: chunk size must be at least one character")
	}
	bounds := chunkCodeBlocks(text)
	// cur is the pending merged span [curStart, curEnd) of curChars chars.
	curStart, curEnd, curChars := 0, 0, 0
	flush := func() bool {
		if curEnd == curStart {
			return true
		}
		ok := emit(curStart, curEnd)
		curStart, curChars = curEnd, 0
		return ok
	}
	for i, b := range bounds {
		e := len(text)
		if i+1 < len(bounds) {
			e = bounds[i+1]
		}
		n := utf8.RuneCountInString(text[b:e])
		switch {
		case n > maxChars:
			if !flush() {
				return
			}
			// Every window but the last is emitted; the last becomes the
			// pending span, so a short tail (often just the closing line and
			// a blank line) can share a chunk with what follows.
			stopped := false
			last := [2]int{b, b}
			chunkWindows(text[b:e], maxChars, 0, func(s, t int) bool {
				if last[1] > last[0] && !emit(last[0], last[1]) {
					stopped = true
					return false
				}
				last = [2]int{b + s, b + t}
				return true
			})
			if stopped {
				return
			}
			curStart, curEnd = last[0], last[1]
			curChars = utf8.RuneCountInString(text[curStart:curEnd])
		case curChars+n <= maxChars:
			curEnd, curChars = e, curChars+n
		default:
			if !flush() {
				return
			}
			curEnd, curChars = e, n
		}
	}
	flush()
}

// chunkCodeBlocks returns the byte offsets where blocks start: always 0,
// then every declaration boundary (see ChunkCode).
func chunkCodeBlocks(text string) []int {
	bounds := []int{0}
	// separated: the previous line was blank, a closing line or the start
	// of the file. run: where a run of prefix lines that began right after
	// such a line started, or -1.
	separated, run := true, -1
	for off := 0; off < len(text); {
		nl := strings.IndexByte(text[off:], '\n')
		next := len(text)
		if nl >= 0 {
			next = off + nl + 1
		}
		line := strings.TrimSuffix(text[off:next], "\n")
		kind := chunkLineKind(line)
		switch kind {
		case chunkKindPrefix:
			if run < 0 && separated {
				run = off
			}
		case chunkKindDecl:
			b := -1
			switch {
			case run >= 0:
				b = run
			case separated:
				b = off
			}
			if b > 0 && b > bounds[len(bounds)-1] {
				bounds = append(bounds, b)
			}
			run = -1
		default:
			run = -1
		}
		separated = kind == chunkKindBlank || kind == chunkKindClosing
		off = next
	}
	return bounds
}

// Line kinds for code chunking.
const (
	chunkKindOther = iota
	chunkKindBlank
	chunkKindClosing
	chunkKindPrefix
	chunkKindDecl
)

// chunkLineKind classifies one line (without its newline).
func chunkLineKind(line string) int {
	trimmed := strings.TrimSpace(line)
	switch {
	case trimmed == "":
		return chunkKindBlank
	case line[0] == ' ' || line[0] == '\t':
		// Indented: inside something. A "*" continuation of a block comment
		// is the exception, so a /** ... */ doc comment stays one prefix run.
		if strings.HasPrefix(trimmed, "*") {
			return chunkKindPrefix
		}
		return chunkKindOther
	case trimmed == "}" || trimmed == "};" || trimmed == "end":
		return chunkKindClosing
	case chunkIsPrefix(line):
		return chunkKindPrefix
	case chunkIsDecl(line):
		return chunkKindDecl
	}
	return chunkKindOther
}

// chunkIsPrefix reports a column-0 line that belongs to the declaration
// below it: a comment (//, /*, *, #, --), a decorator or annotation (@),
// a Rust attribute (#[...]) or a C# attribute ([...]), or a preprocessor
// line (#...).
func chunkIsPrefix(line string) bool {
	for _, p := range []string{"//", "/*", "*", "#", "--", "@", "["} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// chunkDeclKeywords start a top-level declaration when they open a
// column-0 line as a whole word. Over-matching costs little (blocks are
// merged back up to the window); under-matching only means a large block
// is split by ChunkText's boundaries.
var chunkDeclKeywords = []string{
	// Go
	"func", "type", "var", "const",
	// Python, Ruby, Scala
	"def", "async", "class", "module",
	// JavaScript, TypeScript
	"function", "export", "interface", "enum", "let", "declare", "namespace", "abstract",
	// Java, C#, Kotlin, Scala, Swift, PHP
	"public", "private", "protected", "internal", "static", "final", "sealed", "open",
	"override", "data", "fun", "object", "trait", "case", "struct", "extension",
	"protocol", "record", "package", "partial",
	// Rust
	"fn", "pub", "impl", "mod", "unsafe", "extern", "macro_rules",
	// C, C++
	"template", "typedef", "inline",
}

// chunkControlWords open statements, not declarations, even with a
// parenthesis on the line.
var chunkControlWords = []string{
	"if", "for", "while", "switch", "return", "else", "do", "goto", "sizeof",
	"until", "unless", "elif", "fi", "done", "esac", "then", "echo", "print",
}

// chunkIsDecl reports whether a column-0 line starts a declaration.
func chunkIsDecl(line string) bool {
	word := chunkLeadingWord(line)
	if word == "" {
		return false
	}
	for _, k := range chunkDeclKeywords {
		if word == k {
			return true
		}
	}
	for _, k := range chunkControlWords {
		if word == k {
			return false
		}
	}
	// A C-family, Java or shell signature: an identifier, a parenthesis
	// later on the line, and no statement terminator.
	trimmed := strings.TrimRight(line, " \t\r")
	return strings.IndexByte(line, '(') > 0 &&
		!strings.HasSuffix(trimmed, ";") && !strings.HasSuffix(trimmed, ",")
}

// chunkLeadingWord returns the identifier opening line ("" when the line
// does not open with a letter or underscore).
func chunkLeadingWord(line string) string {
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			i++
			continue
		}
		break
	}
	return line[:i]
}
