package search

import (
	"context"
	"errors"
	"sync"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Allow is the per-file authorization of a walk: a file is read only when
// it returns true. It is called from several goroutines at once; an error
// ends the walk (it fails closed).
type Allow func(ctx context.Context, path string) (bool, error)

// ReadSession is a Reader for one goroutine's pass over many files, which
// may keep state between reads (a store's open directory handle); Close
// releases it.
type ReadSession interface {
	Reader
	BufferReader
	Close() error
}

// SessionOpener is an optional ability of a Store: Walk reads through one
// session per worker when the store offers it.
type SessionOpener interface {
	OpenReadSession() ReadSession
}

// Reader reads one file; ports.DocumentStore and ports.RepoStore satisfy
// it.
type Reader interface {
	Read(ctx context.Context, rel string, maxBytes int64) ([]byte, ports.FileInfo, error)
}

// BufferReader is an optional ability of a Reader: reading into a
// caller's buffer, so a walk recycles one buffer per worker instead of
// allocating one per file.
type BufferReader interface {
	ReadInto(ctx context.Context, rel string, maxBytes int64, buf []byte) ([]byte, ports.FileInfo, error)
}

// WalkRequest is the walk stage every search and retrieval index runs:
// list under a prefix, authorize each file, read it within the per-file
// cap.
type WalkRequest struct {
	// Store is the tree walked.
	Store Store
	// Prefix restricts the walk to a path-component prefix ("" is the
	// whole store); the caller has validated it.
	Prefix string
	// Allow authorizes each file before it is read; nil denies every file.
	Allow Allow
	// MaxFiles is how many listed files are admitted (zero:
	// DefaultMaxFiles). Past it the walk only counts, up to
	// listCountFactor times MaxFiles, to say how much the cut left out.
	MaxFiles int
	// MaxFileBytes caps each file read (zero: the store's own cap); a
	// larger file is passed over as SkipTooLarge.
	MaxFileBytes int64
	// Workers is how many files are authorized and read at once (zero:
	// GOMAXPROCS).
	Workers int
	// Stat lists through Store.List, so each File carries the listing's
	// size and modification time, and lists no further than MaxFiles;
	// without it the walk uses the store's streaming WalkPaths when it has
	// one.
	Stat bool
	// Unread, when set, is asked about each authorized file before it is
	// read: true hands it over unread (the caller already has what it
	// needs, e.g. an analysis cached under the listing's size and time).
	Unread func(ports.FileInfo) bool
	// Gate, when set, bounds how far reading runs ahead of a consumer that
	// takes files in listing order: the walk takes one token from it
	// before handing out each batch of batchFiles files, and the consumer
	// puts one back each time it has taken a whole batch. Without it a
	// worker that stalls on one early file lets the others read on to the
	// file cap, work that a search stopped by its result cap throws away.
	Gate chan struct{}
}

// SkipReason is why the walk passed over a file.
type SkipReason uint8

// The reasons a walk passes over a file, as Skipped counts them.
const (
	NotSkipped SkipReason = iota
	SkipDenied
	SkipTooLarge
	SkipBinary
	SkipGone
)

// Add counts a file passed over for r and reports whether it was.
func (s *Skipped) Add(r SkipReason) bool {
	switch r {
	case SkipDenied:
		s.Denied++
	case SkipTooLarge:
		s.TooLarge++
	case SkipBinary:
		s.Binary++
	case SkipGone:
		s.Gone++
	default:
		return false
	}
	return true
}

// File is one admitted file as a walk worker hands it over.
type File struct {
	// Index is the file's position in the listing.
	Index int
	// Info holds the path; with WalkRequest.Stat, also the listing's size
	// and modification time.
	Info ports.FileInfo
	// Data is the text read; it is only valid until the visit returns (the
	// worker reuses the buffer). Nil when skipped or Unread.
	Data []byte
	// Unread: WalkRequest.Unread asked for the file not to be read.
	Unread bool
	// Skip says why the file was passed over, if it was.
	Skip SkipReason
	// Err is the authorizer's failure: the walk stops after it.
	Err error
	// BatchEnd marks the last file of the run of consecutive files the
	// worker took at once, so a visitor can hand its results on in runs.
	BatchEnd bool
}

// Walked is how much of the tree a walk listed.
type Walked struct {
	// Listed counts the files listed (through Store.List, the listing's
	// length; through a Walker, the files the walk went past, admitted or
	// counted).
	Listed int
	// Exact is true when Listed is the whole count under the prefix: the
	// listing ran to its end, whatever happened to the search after.
	Exact bool
	// Capped: there were more files than MaxFiles.
	Capped bool
}

// Walk lists req.Store under req.Prefix in lexical order and hands the
// first MaxFiles files, in runs of consecutive ones, to Workers
// goroutines; each authorizes and reads its files and passes every one
// (read, skipped, or failed) to the visit function the worker factory gave
// it, then calls done (when not nil) before returning. A worker stops at a
// cancelled ctx or after an authorizer failure. Walk returns when the
// listing and every worker are done, with the listing's error.
func Walk(ctx context.Context, req WalkRequest, worker func() (visit func(File), done func())) (Walked, error) {
	if req.Store == nil {
		return Walked{}, errors.New("search: nil store")
	}
	if req.MaxFiles <= 0 {
		req.MaxFiles = DefaultMaxFiles
	}
	if req.Workers <= 0 {
		req.Workers = defaultWorkers()
	}
	if req.MaxFileBytes < 0 {
		req.MaxFileBytes = 0
	}
	jobs := make(chan batch, 2*req.Workers)
	var (
		w       Walked
		walkErr error
		workers sync.WaitGroup
	)
	for range req.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			visit, done := worker()
			if done != nil {
				defer done()
			}
			readFiles(ctx, req, jobs, visit)
		}()
	}
	w, walkErr = list(ctx, req, jobs)
	close(jobs)
	workers.Wait()
	return w, walkErr
}

// batch is a run of consecutive listed files.
type batch struct {
	first int // index of files[0] in the listing
	files []ports.FileInfo
}

// list hands out the listing in batches, admitting MaxFiles files and
// counting on past them.
func list(ctx context.Context, req WalkRequest, jobs chan<- batch) (Walked, error) {
	count, countCap, capped := 0, req.MaxFiles*listCountFactor, false
	// cut: the walk stopped before the listing ended (the search ended
	// first), so count is only a lower bound. Whether ctx is done by the
	// time the listing returns says nothing about that: a search stopped
	// by a bound cancels it the moment the last file is merged, which may
	// be after the listing went through every path.
	cut := false
	cur := batch{files: make([]ports.FileInfo, 0, batchFiles)}
	flush := func() bool {
		if len(cur.files) == 0 {
			return true
		}
		if req.Gate != nil {
			select {
			case <-req.Gate:
			case <-ctx.Done():
				return false
			}
		}
		select {
		case jobs <- cur:
		case <-ctx.Done():
			return false
		}
		cur = batch{first: count, files: make([]ports.FileInfo, 0, batchFiles)}
		return true
	}
	visit := func(f ports.FileInfo) bool {
		if count >= countCap {
			capped = true
			return true
		}
		count++
		if count > req.MaxFiles {
			cut = ctx.Err() != nil // counting only
			return cut
		}
		cur.files = append(cur.files, f)
		if len(cur.files) == batchFiles || count == req.MaxFiles {
			cut = !flush()
			return cut
		}
		return false
	}
	var (
		err    error
		listed int
	)
	if w, ok := req.Store.(Walker); ok && !req.Stat {
		err = w.WalkPaths(ctx, req.Prefix, func(p string) bool { return visit(ports.FileInfo{Path: p}) })
		listed = count
	} else {
		limit := countCap
		if req.Stat {
			limit = req.MaxFiles
		}
		var files []ports.FileInfo
		files, capped, err = req.Store.List(ctx, req.Prefix, limit)
		for _, f := range files {
			if visit(f) {
				break
			}
		}
		// The whole listing was in hand: its length is the count, however
		// far the visits got.
		listed, cut = len(files), false
	}
	if err == nil {
		// A failed last hand-over leaves files unread, not uncounted.
		flush()
	}
	return Walked{
		Listed: listed,
		Exact:  err == nil && !capped && !cut,
		Capped: capped || listed > req.MaxFiles,
	}, err
}

// readFiles authorizes and reads the files of each batch, one reader
// session and one buffer per worker.
func readFiles(ctx context.Context, req WalkRequest, jobs <-chan batch, visit func(File)) {
	var reader Reader = req.Store
	if so, ok := req.Store.(SessionOpener); ok {
		session := so.OpenReadSession()
		defer session.Close()
		reader = session
	}
	br, _ := reader.(BufferReader)
	var buf []byte
	for b := range jobs {
		for i, info := range b.files {
			if ctx.Err() != nil {
				return
			}
			f := File{Index: b.first + i, Info: info, BatchEnd: i == len(b.files)-1}
			ok, err := req.Allow != nil, error(nil)
			if ok {
				ok, err = req.Allow(ctx, info.Path)
			}
			if err != nil {
				if ctx.Err() == nil {
					f.Err = err
					visit(f)
				}
				return
			}
			switch {
			case !ok:
				f.Skip = SkipDenied
			case req.Unread != nil && req.Unread(info):
				f.Unread = true
			default:
				var data []byte
				if br != nil {
					data, _, err = br.ReadInto(ctx, info.Path, req.MaxFileBytes, buf)
				} else {
					data, _, err = reader.Read(ctx, info.Path, req.MaxFileBytes)
				}
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					f.Skip = readSkip(err)
					break
				}
				if cap(data) > cap(buf) {
					buf = data[:0]
				}
				f.Data = data
			}
			visit(f)
		}
	}
}

// readSkip is the skip reason of a read refusal. Any other read failure
// (an I/O error) passes the file over too: one unreadable file must not
// sink the walk, and the count says it happened.
func readSkip(err error) SkipReason {
	switch {
	case errors.Is(err, ports.ErrTooLarge):
		return SkipTooLarge
	case errors.Is(err, ports.ErrBinary):
		return SkipBinary
	}
	return SkipGone
}
