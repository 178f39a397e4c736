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
// Run is the sequential core over any Source (pack_context's literal
// retrieval uses it through StoreSource). The package does no I/O of its
// own: files come from the caller's store.
package search

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/ports"
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

// Limits bounds one Run. A zero or negative field takes its Default*
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
	// GOMAXPROCS). Run is sequential and ignores it.
	Workers int
	// Deadline bounds the whole call. It is checked between lines (between
	// line-aligned chunks for a literal), so a search always ends; when it
	// passes, Run returns what it found with DeadlineExceeded set.
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

// Result is what Run found, with the counters and truncation flags a tool
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

// Source yields the candidate documents of a search. Next returns io.EOF
// when there are no more. The content slice is only read until the next
// call, so a Source may reuse one buffer. A Source is used by one
// goroutine at a time.
type Source interface {
	Next(ctx context.Context) (path string, content []byte, err error)
}

// errDeadline is the cause Run gives its own deadline, to tell it from a
// cancellation by the caller.
var errDeadline = errors.New("search deadline exceeded")

// Run scans the documents src yields for m under lim. It stops at the
// first exhausted bound and reports which. A cancelled ctx returns its
// error; Run's own Deadline does not (see Limits.Deadline). Errors from
// src are returned as they are, with the partial result.
func Run(ctx context.Context, src Source, m *Matcher, lim Limits) (Result, error) {
	if src == nil || m == nil {
		return Result{}, errors.New("search: nil source or matcher")
	}
	lim = lim.withDefaults()
	ctx, cancel := context.WithTimeoutCause(ctx, lim.Deadline, errDeadline)
	defer cancel()
	r := runner{m: m, lim: lim}
	err := r.run(ctx, src)
	r.res.Matches = make([]Match, len(r.hits))
	for i, h := range r.hits {
		r.res.Matches[i] = h.Match
	}
	if err != nil && ctx.Err() != nil && context.Cause(ctx) == errDeadline {
		r.res.DeadlineExceeded = true
		err = nil
	}
	return r.res, err
}

type runner struct {
	m    *Matcher
	lim  Limits
	res  Result
	hits []hit // the matches found, at most lim.MaxResults
}

// errStop ends a scan early once a bound is reached.
var errStop = errors.New("stop")

func (r *runner) run(ctx context.Context, src Source) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, content, err := src.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if r.res.FilesScanned >= r.lim.MaxFiles {
			r.res.FilesTruncated = true
			return nil
		}
		budget := r.lim.MaxTotalBytes - r.res.BytesScanned
		if int64(len(content)) > budget {
			r.res.BytesTruncated = true
			if budget <= 0 {
				return nil
			}
			content = content[:budget]
		}
		r.res.FilesScanned++
		r.res.BytesScanned += int64(len(content))
		if r.m.Regex() {
			err = r.scanLines(ctx, p, content)
		} else {
			err = r.scanLiteral(ctx, p, content)
		}
		if err == errStop {
			return nil
		}
		if err != nil {
			return err
		}
		if r.res.BytesTruncated {
			return nil
		}
	}
}

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

// Doc is one in-memory document for SliceSource.
type Doc struct {
	Path    string
	Content []byte
}

// SliceSource yields docs in order.
func SliceSource(docs []Doc) Source { return &sliceSource{docs: docs} }

type sliceSource struct {
	docs []Doc
	i    int
}

func (s *sliceSource) Next(context.Context) (string, []byte, error) {
	if s.i >= len(s.docs) {
		return "", nil, io.EOF
	}
	d := s.docs[s.i]
	s.i++
	return d.Path, d.Content, nil
}

// DefaultPrefetch is how many documents a StoreSource reads concurrently.
const DefaultPrefetch = 4

// StoreSourceOptions tunes NewStoreSource.
type StoreSourceOptions struct {
	// MaxBytes caps each document read; zero leaves the store's own cap.
	MaxBytes int64
	// Prefetch is how many documents are authorized and read concurrently
	// ahead of the scan (zero: DefaultPrefetch; 1: one at a time, still
	// ahead of the scan). Documents are always yielded in list order.
	Prefetch int
}

// StoreSource yields listed documents from a store, skipping the ones
// allow refuses and the ones that can no longer be read as documents
// (gone, too large, not regular, now a symlink, not text): a listing and the reads
// after it are not atomic. Other errors end the source.
//
// Reading happens on Prefetch goroutines that start at the first Next and
// stop when that call's context is done (Run cancels its own on return),
// at the first error, at the end, or at Close. At most 2*Prefetch+1
// documents are read beyond the last one yielded.
type StoreSource struct {
	store    Reader
	paths    []string
	allow    Allow
	maxBytes int64
	prefetch int
	skipped  int
	err      error // sticky: once Next fails, it keeps failing

	// set up by the first Next
	inner  context.Context // the readers' context, derived from the first Next's
	cancel context.CancelFunc
	queue  chan chan fetched
	free   chan []byte
	lent   []byte // the buffer behind the last content returned
}

type fetched struct {
	path string
	data []byte
	skip bool
	err  error
}

// NewStoreSource returns a Source over paths (typically a store's List).
// A nil allow denies every document.
func NewStoreSource(store Reader, paths []string, allow Allow, opts StoreSourceOptions) *StoreSource {
	p := opts.Prefetch
	if p <= 0 {
		p = DefaultPrefetch
	}
	return &StoreSource{store: store, paths: paths, allow: allow, maxBytes: opts.MaxBytes, prefetch: p}
}

// Skipped returns how many documents were passed over so far.
func (s *StoreSource) Skipped() int { return s.skipped }

// errSourceClosed is what Next returns after Close.
var errSourceClosed = errors.New("search: the source is closed")

// Close stops the reading goroutines; Next fails afterwards. It is only
// needed when the context given to Next stays alive after the caller stops
// reading.
func (s *StoreSource) Close() error {
	if s.cancel != nil {
		s.cancel()
	}
	if s.err == nil {
		s.err = errSourceClosed
	}
	return nil
}

// Next implements Source. The content is valid until the next call.
func (s *StoreSource) Next(ctx context.Context) (string, []byte, error) {
	if s.err != nil {
		return "", nil, s.err
	}
	p, content, err := s.next(ctx)
	if err != nil {
		s.err = err
		if s.cancel != nil {
			s.cancel()
		}
	}
	return p, content, err
}

func (s *StoreSource) next(ctx context.Context) (string, []byte, error) {
	if s.queue == nil {
		s.start(ctx)
	}
	if s.lent != nil {
		select {
		case s.free <- s.lent[:0]:
		default:
		}
		s.lent = nil
	}
	for {
		var (
			ch chan fetched
			ok bool
		)
		select {
		case ch, ok = <-s.queue:
		case <-ctx.Done():
			return "", nil, ctx.Err()
		case <-s.inner.Done():
			return "", nil, s.inner.Err()
		}
		if !ok {
			if err := ctx.Err(); err != nil {
				return "", nil, err
			}
			return "", nil, io.EOF
		}
		var f fetched
		select {
		case f = <-ch:
		case <-ctx.Done():
			return "", nil, ctx.Err()
		case <-s.inner.Done():
			return "", nil, s.inner.Err()
		}
		switch {
		case f.err != nil:
			return "", nil, f.err
		case f.skip:
			s.skipped++
			continue
		}
		s.lent = f.data
		return f.path, f.data, nil
	}
}

// start launches one dispatcher, which queues a result slot per path in
// list order (at most prefetch waiting), and prefetch readers filling them,
// each through its own session when the store offers one.
func (s *StoreSource) start(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	s.inner, s.cancel = ctx, cancel
	s.queue = make(chan chan fetched, s.prefetch)
	s.free = make(chan []byte, 2*s.prefetch+2)
	type job struct {
		path string
		out  chan fetched
	}
	jobs := make(chan job)
	paths := s.paths
	s.paths = nil
	go func() {
		defer close(jobs)
		defer close(s.queue)
		for _, p := range paths {
			out := make(chan fetched, 1)
			select {
			case s.queue <- out:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- job{p, out}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range s.prefetch {
		go func() {
			reader := s.store
			if so, ok := s.store.(SessionOpener); ok {
				session := so.OpenReadSession()
				defer session.Close()
				reader = session
			}
			for j := range jobs {
				var buf []byte
				select {
				case buf = <-s.free:
				default:
				}
				j.out <- s.fetch(ctx, reader, j.path, buf)
			}
		}()
	}
}

// fetch authorizes and reads one document.
func (s *StoreSource) fetch(ctx context.Context, store Reader, p string, buf []byte) fetched {
	if s.allow == nil {
		return fetched{skip: true}
	}
	ok, err := s.allow(ctx, p)
	if err != nil {
		return fetched{err: err}
	}
	if !ok {
		return fetched{skip: true}
	}
	var data []byte
	if br, isBR := store.(BufferReader); isBR {
		data, _, err = br.ReadInto(ctx, p, s.maxBytes, buf)
	} else {
		data, _, err = store.Read(ctx, p, s.maxBytes)
	}
	switch {
	case err == nil:
		return fetched{path: p, data: data}
	case errors.Is(err, ports.ErrNotFound), errors.Is(err, ports.ErrTooLarge),
		errors.Is(err, ports.ErrNotRegular), errors.Is(err, ports.ErrOutsideJail),
		errors.Is(err, ports.ErrBinary):
		return fetched{skip: true}
	}
	return fetched{err: err}
}
