package sqlite

import (
	"context"
	"errors"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/adapters/taskrules"
	"github.com/arrowhead-go/arrowhead/ports"
)

// tasksImportedMarker is the counter set once the previous store's tasks
// have been imported. It is apart from importedMarker: a data directory
// whose memories a build that still kept tasks in the bbolt file imported
// has its tasks there still.
const tasksImportedMarker = "imported_bbolt_tasks"

// TasksImported says whether ImportBoltTasks has run on this store.
func (s *Store) TasksImported(ctx context.Context) (bool, error) {
	return s.markerSet(ctx, tasksImportedMarker)
}

// ImportBoltTasks copies the previous store's task registry (ns, its
// boltstores.TasksNamespace) into this one once: in one write that first
// checks it has not run (several processes may start at once) and ends by
// marking it done, so an import that fails leaves nothing behind and runs
// again at the next start. Nothing is left out:
//
//   - a pending timer stays pending, its due time, repetition, payload and
//     principal kept (it fires late when its time has passed);
//   - a finished task keeps its state and result, and expires or is
//     evicted as it would have been;
//   - a task that was working is failed as interrupted: the process that
//     ran it is gone (the bbolt file is locked by the one importing), as
//     the bbolt registry itself would have recorded at its next start.
//
// A task the store already holds wins over the imported one.
func (s *Store) ImportBoltTasks(ctx context.Context, ns *bolt.Namespace) (imported bool, err error) {
	if ns == nil {
		return false, errors.New("importing the previous store's tasks needs its namespace")
	}
	var tasks []ports.Task
	if err := boltstores.DumpTasks(ctx, ns, func(t ports.Task) error { tasks = append(tasks, t); return nil }); err != nil {
		return false, err
	}
	now := time.Now().UTC().Round(0)
	err = s.Write(ctx, func(tx *Tx) error {
		imported = false
		if n, err := count(ctx, tx, tasksImportedMarker); err != nil || n > 0 {
			return err
		}
		for _, t := range tasks {
			if taskrules.IsRunningTask(t) {
				t = taskrules.InterruptedTask(t, now)
			}
			if err := writeTask(ctx, tx, "INSERT OR IGNORE", t, ""); err != nil {
				return err
			}
		}
		if err := setCount(ctx, tx, tasksImportedMarker, 1); err != nil {
			return err
		}
		imported = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return imported, nil
}
