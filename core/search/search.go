// Package search is the one search pipeline behind doc_search and
// code_search: Search walks a Store under a prefix, authorizes each file,
// reads it within the caller's caps, matches it with a Matcher compiled
// from the caller's query (a byte-level fast path for literals, RE2 line
// by line for patterns), sanitizes and redacts each snippet, and reports
// in one truncation vocabulary which bound (results, files, bytes,
// deadline) cut it short; Report.Answer frames the matches and says in
// words how far the search got and which variable raises the bound. Files
// are read and matched in parallel and merged in listing order, so the
// answer is the first matches by (path, line) whatever the timing.
//
// Walk, the stage of Search that lists, authorizes and reads, is also
// what pack_context's retrieval index is fed from. The package does no
// I/O of its own: files come from the caller's store.
package search

import (
	"bytes"
	"context"
	"errors"
	"time"
	"unicode/utf8"
)

// Defaults for Limits. The first four match ARROWHEAD_SEARCH_MAX_FILES,
// ARROWHEAD_SEARCH_MAX_RESULTS, ARROWHEAD_SEARCH_MAX_TOTAL_BYTES and
// ARROWHEAD_SEARCH_SNIPPET_MAX_CHARS; DefaultDeadline matches
// ARROWHEAD_SEARCH_REGEX_TIMEOUT_MS.
const (
	DefaultMaxFiles        = 2000
	DefaultMaxResults      = 50
	DefaultMaxTotalBytes   = 200_000
	DefaultSnippetMaxChars = 200
	DefaultMaxLineBytes    = 64 << 10
	DefaultDeadline        = 250 * time.Millisecond
)

// literalChunkBytes is how much text a literal search covers between two
// deadline checks; chunks end on line boundaries.
const literalChunkBytes = 256 << 10

// Limits bounds one Search. A zero or negative field takes its Default*
// value: there is no "unlimited".
type Limits struct {
	// MaxFiles caps the documents scanned.
	MaxFiles int
	// MaxResults caps the matches returned (one per matching line).
	MaxResults int
	// MaxTotalBytes caps the bytes scanned across all documents; the
	// document that crosses it is scanned only up to it.
	MaxTotalBytes int64
	// SnippetMaxChars caps a snippet, in characters.
	SnippetMaxChars int
	// MaxLineBytes caps how much of each line is searched: a longer line is
	// searched only in its first MaxLineBytes bytes.
	MaxLineBytes int
	// MaxFileBytes caps each file read by Search (zero: the store's own
	// cap); a larger file is passed over and counted.
	MaxFileBytes int64
	// Workers is how many files Search reads and matches at once (zero:
	// GOMAXPROCS).
	Workers int
	// Deadline bounds the whole call. It is checked between lines (between
	// line-aligned chunks for a literal), so a search always ends; when it
	// passes, Search returns what it found with DeadlineExceeded set.
	Deadline time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxResults <= 0 {
		l.MaxResults = DefaultMaxResults
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if l.SnippetMaxChars <= 0 {
		l.SnippetMaxChars = DefaultSnippetMaxChars
	}
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = DefaultMaxLineBytes
	}
	if l.Deadline <= 0 {
		l.Deadline = DefaultDeadline
	}
	if l.Workers <= 0 {
		l.Workers = defaultWorkers()
	}
	if l.MaxFileBytes < 0 {
		l.MaxFileBytes = 0
	}
	return l
}

// Match is one matching line.
type Match struct {
	Path string
	// Line is 1-based.
	Line int
	// Column is the 1-based position of the match in its line, counted in
	// characters (an invalid UTF-8 byte counts as one).
	Column int
	// Snippet is the matching line, cut to SnippetMaxChars characters
	// around the match. It is raw document text: sanitize before returning
	// it to a caller.
	Snippet string
}

// Result is what Search found, with the counters and truncation flags a tool
// reports so a caller knows the answer may be partial.
type Result struct {
	Matches      []Match
	FilesScanned int
	BytesScanned int64
	// ResultsTruncated: more matches existed than MaxResults.
	ResultsTruncated bool
	// FilesTruncated: the source had more documents than MaxFiles.
	FilesTruncated bool
	// BytesTruncated: scanning stopped at MaxTotalBytes.
	BytesTruncated bool
	// DeadlineExceeded: the Deadline passed before the scan finished.
	DeadlineExceeded bool
}

// Truncations names the bounds that cut the search short, in a fixed
// order ("results", "files", "bytes", "deadline"), as the search tools
// report them; listTruncated adds "files" for a listing that was itself
// cut before the search began. Never nil.
func (r Result) Truncations(listTruncated bool) []string {
	out := []string{}
	if r.ResultsTruncated {
		out = append(out, "results")
	}
	if r.FilesTruncated || listTruncated {
		out = append(out, "files")
	}
	if r.BytesTruncated {
		out = append(out, "bytes")
	}
	if r.DeadlineExceeded {
		out = append(out, "deadline")
	}
	return out
}

// errDeadline is the cause Search gives its own deadline, to tell it from a
// cancellation by the caller.
var errDeadline = errors.New("search deadline exceeded")

type runner struct {
	m    *Matcher
	lim  Limits
	res  Result
	hits []hit // the matches found, at most lim.MaxResults
}

// errStop ends a scan early once a bound is reached.
var errStop = errors.New("stop")

// scanLiteral searches the whole buffer for a literal and locates the line
// only around each match, so text without a match costs one pass of the
// byte search and nothing else.
func (r *runner) scanLiteral(ctx context.Context, p string, buf []byte) error {
	line := 1     // line number of the byte at counted
	counted := 0  // newlines before this offset are in line
	chunkEnd := 0 // the current chunk is buf[:chunkEnd]
	for pos := 0; pos < len(buf); {
		if pos >= chunkEnd {
			if err := ctx.Err(); err != nil {
				return err
			}
			chunkEnd = lineEnd(buf, min(pos+literalChunkBytes, len(buf)))
		}
		i, end := r.m.Index(buf[pos:chunkEnd])
		if i < 0 {
			pos = chunkEnd
			continue
		}
		i, end = i+pos, end+pos
		// pos is at a line start or at the newline before one, so the
		// backward scan only covers text the forward search has passed.
		ls := pos + bytes.LastIndexByte(buf[pos:i], '\n') + 1
		le := lineEnd(buf, i)
		line += bytes.Count(buf[counted:ls], []byte{'\n'})
		counted = ls
		window := min(le, ls+r.lim.MaxLineBytes)
		if end <= window {
			if err := r.add(p, line, trimCR(buf[ls:window]), i-ls, end-ls, end); err != nil {
				return err
			}
		}
		pos = le + 1
	}
	return nil
}

// scanLines runs the matcher on each line (its first MaxLineBytes),
// checking the deadline between lines.
func (r *runner) scanLines(ctx context.Context, p string, buf []byte) error {
	line := 0
	for ls := 0; ls < len(buf); {
		if err := ctx.Err(); err != nil {
			return err
		}
		line++
		le := lineEnd(buf, ls)
		text := trimCR(buf[ls:min(le, ls+r.lim.MaxLineBytes)])
		if start, end := r.m.Index(text); start >= 0 {
			if err := r.add(p, line, text, start, end, ls+end); err != nil {
				return err
			}
		}
		ls = le + 1
	}
	return nil
}

// add records a match ending at offset endOff of its document, or ends
// the scan when the results are full: the match in hand proves there were
// more than MaxResults.
func (r *runner) add(p string, line int, text []byte, start, end, endOff int) error {
	if len(r.hits) >= r.lim.MaxResults {
		r.res.ResultsTruncated = true
		return errStop
	}
	r.hits = append(r.hits, hit{Match: Match{
		Path:    p,
		Line:    line,
		Column:  utf8.RuneCount(text[:start]) + 1,
		Snippet: snippet(text, start, end, r.lim.SnippetMaxChars),
	}, end: int64(endOff)})
	return nil
}

// lineEnd returns the offset of the newline ending the line holding
// buf[i], or len(buf).
func lineEnd(buf []byte, i int) int {
	if i >= len(buf) {
		return len(buf)
	}
	j := bytes.IndexByte(buf[i:], '\n')
	if j < 0 {
		return len(buf)
	}
	return i + j
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// snippet cuts line to at most max characters, keeping the match
// [start, end) and centring it when the line is longer.
func snippet(line []byte, start, end, max int) string {
	if utf8.RuneCount(line) <= max {
		return string(line)
	}
	matchLen := utf8.RuneCount(line[start:end])
	if matchLen >= max {
		return string(line[start:advance(line, start, max)])
	}
	room := max - matchLen
	before := utf8.RuneCount(line[:start])
	after := utf8.RuneCount(line[end:])
	left := min(before, room/2)
	right := min(after, room-left)
	left = min(before, room-right)
	return string(line[retreat(line, start, left):advance(line, end, right)])
}

// advance returns the offset n characters after i.
func advance(b []byte, i, n int) int {
	for ; n > 0 && i < len(b); n-- {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return i
}

// retreat returns the offset n characters before i.
func retreat(b []byte, i, n int) int {
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRune(b[:i])
		i -= size
	}
	return i
}
