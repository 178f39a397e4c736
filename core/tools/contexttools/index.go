package contexttools

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/arrowhead-go/arrowhead/core/codeintel"
	"github.com/arrowhead-go/arrowhead/core/retrieval"
	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/ports"
)

// indexDeadline bounds the reading and parsing one call does to bring the
// index up to date. What was analyzed stays cached, so a cold index of a
// large tree finishes over a few calls, each saying how far it got. (A
// variable only so that a test can shorten it.)
var indexDeadline = 5 * time.Second

// indexWorkers is how many files are read and analyzed at once.
var indexWorkers = min(runtime.GOMAXPROCS(0), 4)

// indexRun is what bringing one kind's index up to date did.
type indexRun struct {
	entries    []*retrieval.Entry
	listed     int  // files listed
	listCut    bool // the listing stopped at its cap
	reused     int  // analyses taken from the cache
	built      int  // files read and analyzed now
	unreadable int  // listed but not readable as text now (binary, grown, gone)
	deadline   bool // indexDeadline passed before every file was analyzed
}

// indexKind walks one store through search.Walk, the walk stage every
// search runs (listing, per-file search authorization, reading within the
// kind's per-file cap, skip accounting), and returns the analyses of the
// files the caller may search: from the cache when a file's listed size
// and modification time are unchanged (the file is then not read), else
// read on behalf of the caller and analyzed now. A file read for the index
// is never shown: what is packed is read again under the read grant.
func (p *server) indexKind(ctx context.Context, who ports.Principal, kind string) (indexRun, error) {
	var (
		store    search.Store
		maxFiles = p.config.DocMaxFiles
		maxBytes = p.config.DocMaxBytes
	)
	if kind == ports.PinDoc {
		store = p.resolver.corpus
	} else {
		if p.resolver.repo == nil {
			return indexRun{}, nil
		}
		store = p.resolver.repo
		maxFiles, maxBytes = p.config.RepoMaxFiles, p.config.RepoMaxBytes
	}
	bctx, cancel := context.WithTimeout(ctx, indexDeadline)
	defer cancel()
	var (
		mu      sync.Mutex
		run     indexRun
		skipped search.Skipped
		present = map[string]bool{}
		slots   = map[int]*retrieval.Entry{}
	)
	walked, err := search.Walk(bctx, search.WalkRequest{
		Store: store,
		Allow: func(ctx context.Context, path string) (bool, error) {
			return p.resolver.allowed(ctx, who, ports.ActionSearch, kind, path), nil
		},
		MaxFiles:     maxFiles,
		MaxFileBytes: maxBytes,
		Workers:      indexWorkers,
		// The listing's size and time key the cache, so a current analysis
		// costs no read.
		Stat:   true,
		Unread: func(info ports.FileInfo) bool { return p.index.Lookup(kind, info) != nil },
	}, func() (func(search.File), func()) {
		return func(f search.File) {
			var e *retrieval.Entry
			switch {
			case f.Unread:
				e = p.index.Lookup(kind, f.Info)
			case f.Skip == search.NotSkipped:
				// A file changed between the listing and the read is keyed
				// by the listing, so it is analyzed again on the next call.
				e = retrieval.Analyze(kind, f.Info, f.Data, symbolsOf(kind, f.Info.Path, f.Data))
				p.index.Store(e)
			}
			mu.Lock()
			defer mu.Unlock()
			present[f.Info.Path] = true
			skipped.Add(f.Skip)
			if e == nil {
				return
			}
			slots[f.Index] = e
			if f.Unread {
				run.reused++
			} else {
				run.built++
			}
		}, nil
	})
	switch {
	case ctx.Err() != nil:
		return indexRun{}, ctx.Err()
	case bctx.Err() != nil:
		// What was analyzed before the index's time limit is kept; the
		// next call continues from the cache.
		run.deadline = true
	case err != nil:
		return indexRun{}, err
	case !walked.Capped:
		// Every listed file was visited: the cache drops the rest.
		p.index.Forget(kind, func(path string) bool { return present[path] })
	}
	run.listed, run.listCut = walked.Listed, walked.Capped
	run.unreadable = skipped.TooLarge + skipped.Binary + skipped.Gone
	for i := range walked.Listed {
		if e := slots[i]; e != nil {
			run.entries = append(run.entries, e)
		}
	}
	return run, nil
}

// symbolsOf is the definitions of a repository file, from codeintel's own
// parsers for Go and Python and its line heuristic for other source; a
// document has none (it is cut at its headings).
func symbolsOf(kind, path string, data []byte) []ports.Symbol {
	if kind != ports.PinRepoFile || !codeintel.HasSymbols(path) {
		return nil
	}
	if codeintel.NativeExtractor(path) != "" {
		return codeintel.NativeSymbols(path, data)
	}
	return codeintel.HeuristicSymbols(data)
}
