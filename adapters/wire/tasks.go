package wire

import (
	"context"
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/inmem"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/docs"
	"github.com/arrowhead-go/arrowhead/core/tools/tasktools"
	"github.com/arrowhead-go/arrowhead/ports"
)

// openTasks opens the task registry when the profile serves the tasks
// family, with the family's background work (scanner is doc_scan's): the
// embedded store's tasks namespace by default. nil when the family is not
// served. Close stops its workers and timers before the store closes
// (closers run last to first).
func (rt *Runtime) openTasks(ctx context.Context, s *settings.Settings, scanner docs.Scanner, clock ports.Clock) (ports.TaskRegistry, error) {
	if !serves(s, catalog.FamilyTasks) {
		return nil, nil
	}
	cfg := ports.TaskConfig{Limits: tasktools.Limits(s), Workers: tasktools.Workers(scanner), Clock: clock}
	// The shared backend's seam: with ARROWHEAD_STATE_DSN set, the
	// PostgreSQL registry (River) is to be opened here from cfg instead,
	// as openWorkingSets does, so every replica sees the same tasks and
	// timers. Until it is, tasks stay in this process's embedded store.
	store, err := rt.embeddedStore(s)
	if err != nil {
		return nil, err
	}
	ns, err := store.Namespace(inmem.TasksNamespace)
	if err != nil {
		return nil, fmt.Errorf("ARROWHEAD_DATA_DIR: %w", err)
	}
	reg, err := inmem.OpenTaskRegistry(ctx, ns, cfg)
	if err != nil {
		return nil, fmt.Errorf("ARROWHEAD_DATA_DIR: the task registry cannot be opened: %w", err)
	}
	rt.closers = append(rt.closers, reg.Close)
	return reg, nil
}
