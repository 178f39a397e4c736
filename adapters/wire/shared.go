package wire

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/contexttools"
	"github.com/arrowhead-go/arrowhead/core/tools/memorytools"
	"github.com/arrowhead-go/arrowhead/core/tools/tasktools"
)

// storeOpen is the embedded store being opened in the background
// (openStoreEarly).
type storeOpen struct {
	done  chan struct{}
	store *sqlite.Store
	err   error
}

// usesSharedStore reports whether assembling s opens the embedded store:
// the embedded vector index (openData: no PostgreSQL for vectors), working
// sets and tasks without ARROWHEAD_STATE_DSN (openContext, openTasks),
// memories without ARROWHEAD_MEMORY_DSN (openMemory). It must not say yes
// where no family opens it: that would create the store for nothing
// (TestUsesSharedStoreMatchesTheAssembly holds it to the openers).
func usesSharedStore(s *settings.Settings) bool {
	return (s.SQLDSN == "" && s.VectorWriteDSN == "") ||
		(s.StateDSN == "" && (contexttools.Family.Serves(s) || tasktools.Family.Serves(s))) ||
		(s.MemoryDSN == "" && memorytools.Family.Serves(s))
}

// openStoreEarly starts opening the embedded store on another goroutine
// when assembling s will need it: opening it (its integrity check, its
// schema) is the longest step of a start, and the steps before the first
// family that needs it (telemetry, sandbox, documents, repository) do not.
// sharedStore waits for it and reports its failure where it always did,
// so a store that cannot be opened still fails the start. A start that
// fails before then closes the store here.
func (rt *Runtime) openStoreEarly(s *settings.Settings) {
	if !usesSharedStore(s) {
		return
	}
	op := &storeOpen{done: make(chan struct{})}
	go func() {
		defer close(op.done)
		op.store, op.err = openStore(s)
	}()
	rt.opening = op
	rt.closers = append(rt.closers, func(context.Context) error {
		<-op.done
		if op.store != nil && rt.shared != op.store {
			return op.store.Close()
		}
		return nil
	})
}

// openStore opens the embedded store on ARROWHEAD_DATA_DIR.
func openStore(s *settings.Settings) (*sqlite.Store, error) {
	// TokenIssuer lets a token caller find what it stored under its bare
	// subject before principals were keyed by issuer (sqlite carry.go).
	return sqlite.Open(sqlite.Config{Dir: s.DataDir, MinFreeBytes: int64(s.DataMinFreeBytes), TokenIssuer: s.Issuer()})
}

// sharedStore opens the embedded store that every server process on
// ARROWHEAD_DATA_DIR shares (adapters/sqlite) on first use, or takes the
// one openStoreEarly opened. On its first
// open beside the previous release's bbolt file it imports that file's
// memories, kv entries, working sets and vectors (importBolt), so nothing written
// before the upgrade is left behind.
func (rt *Runtime) sharedStore(ctx context.Context, s *settings.Settings) (*sqlite.Store, error) {
	if rt.shared != nil {
		return rt.shared, nil
	}
	var store *sqlite.Store
	var err error
	if op := rt.opening; op != nil {
		<-op.done
		store, err = op.store, op.err
		rt.opening = nil
	} else {
		store, err = openStore(s)
	}
	if err != nil {
		if errors.Is(err, sqlite.ErrCorrupt) || errors.Is(err, sqlite.ErrNewer) {
			return nil, err // both name ARROWHEAD_DATA_DIR
		}
		return nil, fmt.Errorf("ARROWHEAD_DATA_DIR: the embedded store cannot be opened: %w", err)
	}
	rt.shared = store
	rt.closers = append(rt.closers, func(context.Context) error { return store.Close() })
	// /ready says when the store cannot write (a full disk, damage).
	rt.Health = append(rt.Health, store)
	if err := rt.importBolt(ctx, s, store); err != nil {
		return nil, fmt.Errorf("ARROWHEAD_DATA_DIR: the previous store's memories, kv entries, working sets and vectors could not be imported (nothing was changed; it is tried again at the next start): %w", err)
	}
	return store, nil
}

// importBolt moves the bbolt file's memories, kv entries, working sets
// and vector collections into store, once for the data directory.
func (rt *Runtime) importBolt(ctx context.Context, s *settings.Settings, store *sqlite.Store) error {
	return importPrevious(ctx, s, store.Imported, func(old *bolt.Store) error {
		memNS, err := old.Namespace(boltstores.MemoryNamespace)
		if err != nil {
			return err
		}
		wsNS, err := old.Namespace(boltstores.WorkingSetsNamespace)
		if err != nil {
			return err
		}
		// The limits only gate new pins, which the import makes none of.
		sets, err := boltstores.NewWorkingSets(wsNS, workingSetLimits(s))
		if err != nil {
			return err
		}
		vecNS, err := old.Namespace(boltstores.VectorNamespace)
		if err != nil {
			return err
		}
		_, err = store.ImportBolt(ctx, sqlite.BoltSource{Memory: boltstores.NewMemoryStore(memNS), WorkingSets: sets,
			Vectors: func(fn func(boltstores.VectorDump) error) error { return boltstores.DumpBoltVectors(ctx, vecNS, fn) }})
		return err
	})
}

// importPrevious runs importFn on the previous release's bbolt file when
// ARROWHEAD_DATA_DIR holds one and done says its import has not yet run.
// importFn checks its marker again inside its own transaction: another
// process may have imported while this one waited for the file.
func importPrevious(ctx context.Context, s *settings.Settings, done func(context.Context) (bool, error), importFn func(*bolt.Store) error) error {
	if _, err := os.Stat(filepath.Join(s.DataDir, bolt.FileName)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if imported, err := done(ctx); err != nil || imported {
		return err
	}
	return withPreviousStore(s, importFn)
}
