package wire

import (
	"context"
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/docs"
	"github.com/arrowhead-go/arrowhead/core/tools/tasktools"
	"github.com/arrowhead-go/arrowhead/ports"
)

// openTasks opens the task registry when the profile serves the tasks
// family, with the family's background work (scanner is doc_scan's): on
// the state database when ARROWHEAD_STATE_DSN is set, in the embedded
// store every process on ARROWHEAD_DATA_DIR shares otherwise (the
// previous release's tasks imported into it on first start). nil when the
// family is not served. Close stops its workers and timers before the
// store or the pool closes (closers run last to first).
func (rt *Runtime) openTasks(ctx context.Context, s *settings.Settings, scanner docs.Scanner, clock ports.Clock) (ports.TaskRegistry, error) {
	if !tasktools.Family.Serves(s) {
		return nil, nil
	}
	tc, err := tasktools.Family.Config(s)
	if err != nil {
		return nil, err
	}
	cfg := ports.TaskConfig{Limits: tc.Limits(), Workers: tasktools.Workers(scanner), Clock: clock}
	if s.StateDSN != "" {
		// The shared backend: every replica sees the same tasks and
		// timers, and River runs them on whichever replica is alive.
		pool, err := rt.statePool(ctx, s)
		if err != nil {
			return nil, err
		}
		reg, err := postgres.OpenTaskRegistry(ctx, pool, cfg)
		if err != nil {
			return nil, fmt.Errorf("ARROWHEAD_STATE_DSN: %w", err)
		}
		rt.closers = append(rt.closers, reg.Close)
		rt.Health = append(rt.Health, reg)
		return reg, nil
	}
	store, err := rt.sharedStore(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := rt.importBoltTasks(ctx, s, store); err != nil {
		return nil, fmt.Errorf("ARROWHEAD_DATA_DIR: the previous store's tasks and timers could not be imported (nothing was changed; it is tried again at the next start): %w", err)
	}
	reg, err := sqlite.OpenTaskRegistry(ctx, store, cfg)
	if err != nil {
		return nil, fmt.Errorf("ARROWHEAD_DATA_DIR: the task registry cannot be opened: %w", err)
	}
	rt.closers = append(rt.closers, reg.Close)
	return reg, nil
}

// importBoltTasks moves the bbolt file's tasks and pending timers into
// store, once for the data directory (sqlite.ImportBoltTasks says what
// becomes of each).
func (rt *Runtime) importBoltTasks(ctx context.Context, s *settings.Settings, store *sqlite.Store) error {
	return importPrevious(ctx, s, store.TasksImported, func(old *bolt.Store) error {
		ns, err := old.Namespace(boltstores.TasksNamespace)
		if err != nil {
			return err
		}
		_, err = store.ImportBoltTasks(ctx, ns)
		return err
	})
}
