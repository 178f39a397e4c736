package search

import (
	"context"
	"errors"
	"runtime"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Store is what Search reads from: ports.DocumentStore and ports.RepoStore
// both satisfy it.
type Store interface {
	Reader
	List(ctx context.Context, prefix string, limit int) ([]ports.FileInfo, bool, error)
}

// Walker is an optional ability of a Store: handing out the paths List
// would return, in the same lexical order, as its walk finds them, without
// a stat per file. Search then starts reading the first files while the
// rest are being listed. visit returning true stops the walk.
type Walker interface {
	WalkPaths(ctx context.Context, prefix string, visit func(path string) (stop bool)) error
}

// Request is one search: where, who may see what, what to find, and the
// caller's own caps.
type Request struct {
	// Store is the tree searched.
	Store Store
	// Prefix restricts the search to a path-component prefix ("" is the
	// whole store); the caller has validated it.
	Prefix string
	// Allow authorizes each file before it is read; nil denies every file.
	Allow Allow
	// Matcher is the compiled query.
	Matcher *Matcher
	// Limits are the caller's caps; MaxFileBytes and Workers apply here.
	Limits Limits
	// Redact, when set, rewrites a file that has matches before its
	// snippets are taken (the secret scanner's line-keeping redaction):
	// the file is matched again as redacted, so a snippet never shows a
	// secret, not even a line of one that only the lines around it make
	// recognisable, and a search for a secret finds its placeholder only.
	// Nil when nothing is redacted (no scanner, or
	// ARROWHEAD_REDACT_READS=false): the report then makes no claim
	// about secrets.
	Redact func(string) string
}

// Skipped counts the listed files a search passed over, by reason.
type Skipped struct {
	// Denied: the caller may not search them.
	Denied int
	// TooLarge: above the per-file cap.
	TooLarge int
	// Binary: not text (a NUL byte, or the store's own content check).
	Binary int
	// Gone: removed, replaced or no longer a served regular file between
	// the listing and the read.
	Gone int
}

// Total is the number of files passed over.
func (s Skipped) Total() int { return s.Denied + s.TooLarge + s.Binary + s.Gone }

// Report is what Search found: the Result (matches sanitized and
// redacted, in path then line order; counters; which bounds cut it short)
// and how much of the tree there was.
type Report struct {
	Result
	// FilesListed counts the served files under the prefix: every one the
	// walk found, past MaxFiles too (it keeps counting, up to
	// listCountFactor times MaxFiles, to say how much a cut left out).
	FilesListed int
	// ListedExact is true when FilesListed is the whole count; false when
	// the listing itself was stopped first (a result or byte bound met
	// while it was still going, the deadline, the counting cap). A bound
	// met after the listing ended leaves the count exact.
	ListedExact bool
	// Skipped counts the files passed over among those searched.
	Skipped Skipped
	// Limits are the caps that applied (defaults filled in).
	Limits Limits
	// Prefix is the request's prefix.
	Prefix string
	// SecretsRedacted is true when the request redacted secrets before
	// matching (Request.Redact was set), so text inside a secret value
	// is never found. It is set for every such search, whether or not a
	// secret was met: a flag or a count that followed the query into the
	// secrets would answer "does the secret start with this?" one guess
	// at a time.
	SecretsRedacted bool
}

// Complete reports that every admitted file was searched to its end: no
// bound cut the search short.
func (r Report) Complete() bool {
	return !r.ResultsTruncated && !r.FilesTruncated && !r.BytesTruncated && !r.DeadlineExceeded
}

// Truncated is Result.Truncations: the one vocabulary ("results", "files",
// "bytes", "deadline") every search reports its cuts in.
func (r Report) Truncated() []string { return r.Truncations(false) }

// listCountFactor bounds how far past MaxFiles a search keeps counting
// the listing, so a cut can say "of N files" without walking an unbounded
// tree.
const listCountFactor = 10

// SanitizeSnippet is the one snippet sanitizer of every search: the
// text rules of content.SanitizeString, then every line break (a lone CR
// becomes one) folded to a space, so a snippet or a path stays on its
// line of the answer.
func SanitizeSnippet(s string) string {
	return strings.ReplaceAll(content.SanitizeString(s), "\n", " ")
}

// fileHits is what a worker found in one file.
type fileHits struct {
	index int
	hits  []hit
	more  bool  // the file had more than MaxResults matches
	size  int64 // bytes read
	skip  SkipReason
	err   error // the authorizer failed: the search fails closed
}

// hit is a match with the offset its match ends at, which the byte
// budget is applied to.
type hit struct {
	Match
	end int64
}

// Search runs one search: it walks the store under the prefix in lexical
// order, authorizes each file, reads it (within MaxFileBytes), matches it,
// and sanitizes and redacts each snippet; files are read and matched on
// Limits.Workers goroutines, and the results are merged in listing order,
// so the answer is the first MaxResults matches by (path, line) whatever
// the timing. It stops at the first bound reached, in listing order:
// MaxFiles files admitted, MaxTotalBytes read (the file that crosses it is
// matched only up to it), MaxResults matches, or the Deadline, and says
// which. A cancelled ctx returns its error; the Deadline does not.
func Search(ctx context.Context, req Request) (Report, error) {
	if req.Store == nil || req.Matcher == nil {
		return Report{}, errors.New("search: nil store or matcher")
	}
	lim := req.Limits.withDefaults()
	rep := Report{Limits: lim, Prefix: req.Prefix, Result: Result{Matches: []Match{}}, SecretsRedacted: req.Redact != nil}
	ctx, stop := context.WithTimeoutCause(ctx, lim.Deadline, errDeadline)
	defer stop()
	inner, cancel := context.WithCancel(ctx)
	defer cancel()

	results := make(chan []fileHits, 2*lim.Workers)
	// Reads may run aheadBatches batches past the merger, whatever the
	// scheduling: enough to keep every worker busy, little to throw away.
	aheadBatches := 4 * lim.Workers
	gate := make(chan struct{}, aheadBatches)
	for range aheadBatches {
		gate <- struct{}{}
	}
	var (
		walked  Walked
		walkErr error
	)
	go func() {
		defer close(results)
		walked, walkErr = Walk(inner, WalkRequest{
			Store:        req.Store,
			Prefix:       req.Prefix,
			Allow:        req.Allow,
			MaxFiles:     lim.MaxFiles,
			MaxFileBytes: lim.MaxFileBytes,
			Workers:      lim.Workers,
			Gate:         gate,
		}, func() (func(File), func()) { return matchFiles(inner, req, lim, results) })
	}()

	m := merger{lim: lim, rep: &rep, pending: map[int]fileHits{}, gate: gate}
	drained := false
loop:
	for {
		select {
		case hits, ok := <-results:
			if !ok {
				drained = true
				break loop
			}
			if m.add(hits) {
				break loop
			}
		case <-ctx.Done():
			break loop
		}
	}
	cancel()
	// The workers hand in what they finished before they saw the end; it
	// still counts, in order, unless a bound already ended the search.
	// results is closed once the walk and every worker are done.
	for hits := range results {
		if !m.stopped {
			m.add(hits)
		}
	}
	listed := walked.Listed
	rep.FilesListed = max(listed, rep.FilesScanned+rep.Skipped.Total())
	rep.ListedExact = walked.Exact
	if rep.FilesListed > lim.MaxFiles && !rep.ResultsTruncated && !rep.BytesTruncated {
		rep.FilesTruncated = true
	}
	switch {
	case m.err != nil:
		return rep, m.err
	case m.stopped:
		// A bound met in listing order ended the search; the cancellation
		// that followed is not an error.
	case drained && walkErr == nil && m.next == min(listed, lim.MaxFiles):
		// Every admitted file was searched.
	case walkErr != nil && ctx.Err() == nil:
		return rep, walkErr
	case context.Cause(ctx) == errDeadline:
		rep.DeadlineExceeded = true
		rep.ListedExact = false
	case ctx.Err() != nil:
		return rep, ctx.Err()
	}
	return rep, nil
}

// batchFiles is how many paths the walk hands a worker at a time:
// enough to keep channel traffic well below the cost of the reads, few
// enough that the first results come early.
const batchFiles = 16

// matchFiles is one walk worker of Search: it matches each file read,
// sanitizes and redacts its snippets, and hands the results in per batch
// (done hands in the rest, even once the search is over: Search drains the
// results until every worker has returned).
func matchFiles(ctx context.Context, req Request, lim Limits, results chan<- []fileHits) (func(File), func()) {
	r := runner{m: req.Matcher, lim: lim}
	var out []fileHits
	visit := func(f File) {
		fh := fileHits{index: f.Index, skip: f.Skip, err: f.Err}
		if f.Err == nil && f.Skip == NotSkipped {
			p, data := f.Info.Path, f.Data
			fh.size = int64(len(data))
			r.res = Result{}
			r.hits = r.hits[:0]
			var err error
			if req.Matcher.Regex() {
				err = r.scanLines(ctx, p, data)
			} else {
				err = r.scanLiteral(ctx, p, data)
			}
			if err != nil && err != errStop {
				return // only the context ends a scan; the walk stops next
			}
			if len(r.hits) > 0 && req.Redact != nil {
				// Only a file with matches pays for the scan.
				if red := req.Redact(string(data)); red != string(data) {
					r.res = Result{}
					r.hits = r.hits[:0]
					if req.Matcher.Regex() {
						err = r.scanLines(ctx, p, []byte(red))
					} else {
						err = r.scanLiteral(ctx, p, []byte(red))
					}
					if err != nil && err != errStop {
						return
					}
				}
			}
			fh.more = r.res.ResultsTruncated
			if len(r.hits) > 0 {
				path := SanitizeSnippet(p)
				fh.hits = make([]hit, len(r.hits))
				for j, h := range r.hits {
					h.Path = path
					h.Snippet = SanitizeSnippet(h.Snippet)
					fh.hits[j] = h
				}
			}
		}
		out = append(out, fh)
		if f.BatchEnd {
			results <- out
			out = nil
		}
	}
	done := func() {
		if len(out) > 0 {
			results <- out
		}
	}
	return visit, done
}

// merger folds the workers' per-file results into the report in listing
// order, applying the result and byte bounds exactly as a one-file-at-a-
// time search would.
type merger struct {
	lim     Limits
	rep     *Report
	pending map[int]fileHits
	next    int
	stopped bool
	err     error
	// gate gets a token back for every whole batch taken in order.
	gate chan struct{}
}

// add takes one batch of results and reports whether the search is over.
func (m *merger) add(batch []fileHits) bool {
	for _, fh := range batch {
		m.pending[fh.index] = fh
	}
	for {
		fh, ok := m.pending[m.next]
		if !ok {
			return false
		}
		delete(m.pending, m.next)
		m.next++
		if m.next%batchFiles == 0 && m.gate != nil {
			select {
			case m.gate <- struct{}{}:
			default:
			}
		}
		if m.take(fh) {
			m.stopped = true
			return true
		}
	}
}

// take applies one file in order; true ends the search.
func (m *merger) take(fh fileHits) bool {
	rep := m.rep
	if fh.err != nil {
		m.err = fh.err
		return true
	}
	if rep.Skipped.Add(fh.skip) {
		return false
	}
	left := m.lim.MaxTotalBytes - rep.BytesScanned
	if left <= 0 {
		rep.BytesTruncated = true
		return true
	}
	hits, more, cut := fh.hits, fh.more, false
	if fh.size > left {
		// The file crossing the budget is searched only up to it.
		cut = true
		n := 0
		for n < len(hits) && hits[n].end <= left {
			n++
		}
		more = more && n == len(hits)
		hits = hits[:n]
		fh.size = left
	}
	rep.FilesScanned++
	rep.BytesScanned += fh.size
	room := m.lim.MaxResults - len(rep.Matches)
	if len(hits) > room {
		hits, more = hits[:room], true
	}
	for _, h := range hits {
		rep.Matches = append(rep.Matches, h.Match)
	}
	if more {
		rep.ResultsTruncated = true
		return true
	}
	if cut {
		rep.BytesTruncated = true
		return true
	}
	return false
}

// defaultWorkers is how many files Search reads and matches at once.
func defaultWorkers() int { return max(1, runtime.GOMAXPROCS(0)) }
