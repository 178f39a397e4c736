package contexttools

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/arrowhead-go/arrowhead/core/codeintel"
	"github.com/arrowhead-go/arrowhead/core/retrieval"
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

// indexKind lists one store, keeps the files the caller may search, and
// returns their analyses: from the cache when a file's size and
// modification time are unchanged, else read (only on behalf of a caller
// allowed to search it) and analyzed now. A file read for the index is
// never shown: what is packed is read again under the read grant.
func (p packer) indexKind(ctx context.Context, who ports.Principal, kind string) (indexRun, error) {
	var (
		reader   func(context.Context, string, int64) ([]byte, ports.FileInfo, error)
		list     func(context.Context, string, int) ([]ports.FileInfo, bool, error)
		maxFiles = p.settings.SearchMaxFiles
		maxBytes = int64(p.settings.DocMaxBytes)
	)
	if kind == ports.PinDoc {
		reader, list = p.resolver.corpus.Read, p.resolver.corpus.List
	} else {
		if p.resolver.repo == nil {
			return indexRun{}, nil
		}
		reader, list = p.resolver.repo.Read, p.resolver.repo.List
		maxFiles, maxBytes = p.settings.RepoSearchMaxFiles, int64(p.settings.RepoMaxFileBytes)
	}
	listed, cut, err := list(ctx, "", maxFiles)
	if err != nil {
		return indexRun{}, err
	}
	run := indexRun{listed: len(listed), listCut: cut}
	present := make(map[string]bool, len(listed))
	slots := make([]*retrieval.Entry, len(listed))
	var todo []int
	for i, f := range listed {
		present[f.Path] = true
		if !p.resolver.allowed(ctx, who, ports.ActionSearch, kind, f.Path) {
			continue
		}
		if e := p.index.Lookup(kind, f); e != nil {
			slots[i] = e
			run.reused++
			continue
		}
		todo = append(todo, i)
	}
	if !cut {
		p.index.Forget(kind, func(path string) bool { return present[path] })
	}
	if len(todo) > 0 {
		bctx, cancel := context.WithTimeout(ctx, indexDeadline)
		defer cancel()
		var (
			mu   sync.Mutex
			wg   sync.WaitGroup
			next = make(chan int)
			fail error
		)
		for range min(indexWorkers, len(todo)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					data, info, err := reader(bctx, listed[i].Path, maxBytes)
					mu.Lock()
					switch {
					case err == nil:
						info.Path = listed[i].Path
						info.Size, info.ModTime = listed[i].Size, listed[i].ModTime
					case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
						run.deadline = run.deadline || ctx.Err() == nil
						if ctx.Err() != nil && fail == nil {
							fail = ctx.Err()
						}
					case unreadable(err):
						run.unreadable++
					default:
						if fail == nil {
							fail = err
						}
					}
					mu.Unlock()
					if err != nil {
						continue
					}
					// The listing's size and time key the cache: a file
					// changed between the listing and the read is analyzed
					// again on the next call.
					e := retrieval.Analyze(kind, info, data, symbolsOf(kind, info.Path, data))
					p.index.Store(e)
					mu.Lock()
					slots[i] = e
					run.built++
					mu.Unlock()
				}
			}()
		}
	feed:
		for _, i := range todo {
			select {
			case next <- i:
			case <-bctx.Done():
				run.deadline = ctx.Err() == nil
				break feed
			}
		}
		close(next)
		wg.Wait()
		if fail != nil {
			return indexRun{}, fail
		}
	}
	for _, e := range slots {
		if e != nil {
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

// unreadable reports a store refusal the index passes over: the file went
// away, grew past the cap, or is not text.
func unreadable(err error) bool {
	return errors.Is(err, ports.ErrNotFound) || errors.Is(err, ports.ErrTooLarge) || errors.Is(err, ports.ErrBinary) ||
		errors.Is(err, ports.ErrNotRegular) || errors.Is(err, ports.ErrOutsideJail) || errors.Is(err, ports.ErrNotDocument)
}
