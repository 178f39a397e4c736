package sqlite_test

import (
	"context"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/adapters/tasktest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// sqliteTasks is a data directory; each Open opens the store file in it
// and the registry, as a process start does.
type sqliteTasks struct{ dir string }

type openTasks struct {
	*sqlite.TaskRegistry
	store *sqlite.Store
}

func (o openTasks) Close(ctx context.Context) error {
	err := o.TaskRegistry.Close(ctx)
	if cerr := o.store.Close(); err == nil {
		err = cerr
	}
	return err
}

func (d sqliteTasks) Open(t *testing.T, cfg ports.TaskConfig) tasktest.Registry {
	t.Helper()
	return openTaskRegistry(t, d.dir, cfg)
}

func openTaskRegistry(t testing.TB, dir string, cfg ports.TaskConfig) openTasks {
	t.Helper()
	s, err := sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sqlite.OpenTaskRegistry(context.Background(), s, cfg)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	return openTasks{r, s}
}

func TestTaskRegistryContract(t *testing.T) {
	tasktest.Run(t, func(t *testing.T) tasktest.Storage { return sqliteTasks{dir: t.TempDir()} })
}
