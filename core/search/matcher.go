package search

import (
	"bytes"
	"errors"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Defaults for MatcherOptions. DefaultMaxQueryChars matches
// ARROWHEAD_SEARCH_QUERY_MAX_LENGTH.
const (
	DefaultMaxQueryChars = 200
	// DefaultMaxRepeat bounds a counted repetition ({n,m}); RE2 itself
	// allows 1000, which nested twice is already a large program.
	DefaultMaxRepeat = 100
	// DefaultMaxProgramInsts bounds the compiled program, which is what
	// the RE2 engine's time per byte grows with.
	DefaultMaxProgramInsts = 5000
)

// Query errors. Their text is fixed and never includes the query, so it is
// safe to show a caller.
var (
	ErrQueryEmpty        = errors.New("the search query is empty")
	ErrQueryTooLong      = errors.New("the search query is too long")
	ErrQueryMultiline    = errors.New("the search query must be a single line")
	ErrQueryEncoding     = errors.New("the search query is not valid UTF-8")
	ErrPatternInvalid    = errors.New("the search pattern is not a valid regular expression")
	ErrPatternTooComplex = errors.New("the search pattern is too complex")
)

// MatcherOptions tunes NewMatcher. A zero or negative bound takes its
// Default* value: there is no "unlimited".
type MatcherOptions struct {
	// CaseInsensitive matches under Unicode simple case folding, as
	// regexp's (?i) flag does, for literals and patterns alike.
	CaseInsensitive bool
	// MaxQueryChars caps the query length in characters.
	MaxQueryChars int
	// MaxRepeat caps the bounds of a counted repetition in a pattern.
	MaxRepeat int
	// MaxProgramInsts caps the size of a pattern's compiled program.
	MaxProgramInsts int
}

func (o MatcherOptions) withDefaults() MatcherOptions {
	if o.MaxQueryChars <= 0 {
		o.MaxQueryChars = DefaultMaxQueryChars
	}
	if o.MaxRepeat <= 0 {
		o.MaxRepeat = DefaultMaxRepeat
	}
	if o.MaxProgramInsts <= 0 {
		o.MaxProgramInsts = DefaultMaxProgramInsts
	}
	return o
}

// Matcher finds a query in text. A literal (folded or not) is searched
// over whole documents, with bytes.Index or a byte-scan for the first
// character's case variants; a pattern runs on Go's regexp (RE2: time
// linear in the input, so no catastrophic backtracking) one line at a
// time. A Matcher is immutable and safe for concurrent use.
type Matcher struct {
	lit  []byte         // a case-sensitive literal
	rare int            // the offset in lit of its rarest byte (see rareByteAt)
	fold *foldLiteral   // a case-insensitive literal
	re   *regexp.Regexp // a pattern
}

// NewMatcher compiles query. With regex false the query is a literal
// string; with regex true it is an RE2 pattern (Perl syntax), and the
// caller is responsible for having checked that the deployment allows
// regex search (ARROWHEAD_SEARCH_REGEX_ENABLED). A query may not span
// lines, since matches never do.
func NewMatcher(query string, regex bool, opts MatcherOptions) (*Matcher, error) {
	opts = opts.withDefaults()
	switch {
	case query == "":
		return nil, ErrQueryEmpty
	case !utf8.ValidString(query):
		return nil, ErrQueryEncoding
	case utf8.RuneCountInString(query) > opts.MaxQueryChars:
		return nil, ErrQueryTooLong
	case strings.ContainsAny(query, "\r\n"):
		return nil, ErrQueryMultiline
	}
	if !regex {
		if !opts.CaseInsensitive {
			return &Matcher{lit: []byte(query), rare: rareByteAt(query)}, nil
		}
		return &Matcher{fold: newFoldLiteral(query)}, nil
	}
	flags := syntax.Perl
	if opts.CaseInsensitive {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(query, flags)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) && (se.Code == syntax.ErrLarge || se.Code == syntax.ErrNestingDepth) {
			return nil, ErrPatternTooComplex
		}
		return nil, ErrPatternInvalid
	}
	if repeatTooLarge(tree, opts.MaxRepeat) {
		return nil, ErrPatternTooComplex
	}
	prog, err := syntax.Compile(tree.Simplify())
	if err != nil || len(prog.Inst) > opts.MaxProgramInsts {
		return nil, ErrPatternTooComplex
	}
	if opts.CaseInsensitive {
		query = "(?i)" + query
	}
	re, err := regexp.Compile(query)
	if err != nil {
		return nil, ErrPatternInvalid
	}
	return &Matcher{re: re}, nil
}

// repeatTooLarge reports a counted repetition whose bounds exceed max.
func repeatTooLarge(re *syntax.Regexp, max int) bool {
	if re.Op == syntax.OpRepeat && (re.Min > max || re.Max > max) {
		return true
	}
	for _, sub := range re.Sub {
		if repeatTooLarge(sub, max) {
			return true
		}
	}
	return false
}

// Regex reports whether the matcher is a pattern, which runs line by line,
// rather than a literal, which can never match across a newline.
func (m *Matcher) Regex() bool { return m.re != nil }

// Index returns the byte offsets [start, end) of the leftmost match in b,
// or (-1, -1). For a pattern b should be a single line: its ^ and $ anchor
// at the ends of b.
func (m *Matcher) Index(b []byte) (start, end int) {
	switch {
	case m.re != nil:
		if loc := m.re.FindIndex(b); loc != nil {
			return loc[0], loc[1]
		}
	case m.fold != nil:
		return m.fold.index(b)
	default:
		if i := m.indexLiteral(b); i >= 0 {
			return i, i + len(m.lit)
		}
	}
	return -1, -1
}

// commonBytes are the bytes of source code and prose from most to least
// frequent, roughly: blanks, lowercase letters in English order, the
// common punctuation, digits. A byte not listed (a capital, rarer
// punctuation, a byte of a multi-byte character) is rarer than all of them.
const commonBytes = " \n\tetaoinsrlcdhupmfgybw.,()_;=\"/*{}-:'0123456789vkxjqz>[]<&!+#|"

// rareByteAt is the offset of the query's rarest byte by commonBytes, the
// first of the rarest when several tie.
func rareByteAt(q string) int {
	rank := func(c byte) int {
		if i := strings.IndexByte(commonBytes, c); i >= 0 {
			return len(commonBytes) - i
		}
		return 0
	}
	at := 0
	for i := 1; i < len(q); i++ {
		if rank(q[i]) < rank(q[at]) {
			at = i
		}
	}
	return at
}

// indexLiteral is bytes.Index(b, m.lit), found faster in source text.
// bytes.Index scans for the literal's first byte, and in code the first
// byte of a query is often common ("s" of "sync.Mutex"), so most of its
// stops are false; here the scan (bytes.IndexByte, vectorized) is for the
// literal's rarest byte, and each stop is checked in place. Should stops
// keep failing anyway (a query of common bytes over repetitive text), the
// rest is handed to bytes.Index, so the time stays linear in len(b).
func (m *Matcher) indexLiteral(b []byte) int {
	n := len(m.lit)
	if n < 2 {
		return bytes.Index(b, m.lit)
	}
	rare, at := m.lit[m.rare], m.rare
	fails := 0
	for i := 0; i+n <= len(b); {
		j := bytes.IndexByte(b[i+at:len(b)-n+at+1], rare)
		if j < 0 {
			return -1
		}
		start := i + j
		if bytes.Equal(b[start:start+n], m.lit) {
			return start
		}
		i = start + 1
		if fails++; fails > 4+i/16 {
			if k := bytes.Index(b[i:], m.lit); k >= 0 {
				return i + k
			}
			return -1
		}
	}
	return -1
}

// foldLiteral matches a literal under Unicode simple case folding, the
// semantics of regexp's (?i): each query character matches any member of
// its folding orbit (k, K and the Kelvin sign; s, S and the long s).
type foldLiteral struct {
	orbits [][]rune // per query character, its orbit, sorted
	starts []byte   // distinct first bytes of the first orbit's encodings
}

func newFoldLiteral(q string) *foldLiteral {
	f := &foldLiteral{}
	for _, r := range q {
		orbit := []rune{r}
		for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
			orbit = append(orbit, o)
		}
		slices.Sort(orbit)
		f.orbits = append(f.orbits, orbit)
	}
	var enc [utf8.UTFMax]byte
	for _, r := range f.orbits[0] {
		utf8.EncodeRune(enc[:], r)
		if !slices.Contains(f.starts, enc[0]) {
			f.starts = append(f.starts, enc[0])
		}
	}
	return f
}

// index finds candidates with bytes.IndexByte on the first character's
// possible first bytes, then checks the whole query character by
// character. An invalid byte in b matches nothing, as with bytes.Index
// (regexp would let it match U+FFFD).
func (f *foldLiteral) index(b []byte) (start, end int) {
	next := make([]int, len(f.starts)) // next occurrence of each start byte at or after pos
	for i := range next {
		next[i] = -2
	}
	for pos := 0; pos < len(b); {
		cand := -1
		for i, c := range f.starts {
			if next[i] != -1 && next[i] < pos {
				if j := bytes.IndexByte(b[pos:], c); j >= 0 {
					next[i] = pos + j
				} else {
					next[i] = -1
				}
			}
			if next[i] >= 0 && (cand < 0 || next[i] < cand) {
				cand = next[i]
			}
		}
		if cand < 0 {
			break
		}
		if end, ok := f.matchAt(b, cand); ok {
			return cand, end
		}
		pos = cand + 1
	}
	return -1, -1
}

func (f *foldLiteral) matchAt(b []byte, i int) (int, bool) {
	for _, orbit := range f.orbits {
		if i >= len(b) {
			return 0, false
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return 0, false
		}
		if _, found := slices.BinarySearch(orbit, r); !found {
			return 0, false
		}
		i += size
	}
	return i, true
}
