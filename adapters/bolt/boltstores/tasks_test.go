package boltstores_test

import (
	"context"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/adapters/tasktest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// boltTasks is a data directory; each Open opens the store file in it and
// the registry's namespace, as a process start does.
type boltTasks struct{ dir string }

type openTasks struct {
	*boltstores.TaskRegistry
	store *bolt.Store
}

func (o openTasks) Close(ctx context.Context) error {
	err := o.TaskRegistry.Close(ctx)
	if cerr := o.store.Close(); err == nil {
		err = cerr
	}
	return err
}

func (b boltTasks) Open(t *testing.T, cfg ports.TaskConfig) tasktest.Registry {
	t.Helper()
	return openTaskRegistry(t, b.dir, cfg)
}

// openTaskRegistry opens the store file in dir and the registry in it.
func openTaskRegistry(t testing.TB, dir string, cfg ports.TaskConfig) openTasks {
	t.Helper()
	store, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := store.Namespace(boltstores.TasksNamespace)
	if err != nil {
		t.Fatal(err)
	}
	r, err := boltstores.OpenTaskRegistry(context.Background(), ns, cfg)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	return openTasks{r, store}
}

func TestTaskRegistryContract(t *testing.T) {
	tasktest.Run(t, func(t *testing.T) tasktest.Storage { return boltTasks{dir: t.TempDir()} })
}
