package boltstores_test

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/ports"
)

func openMemoryStore(t testing.TB, dir string) (*boltstores.MemoryStore, *bolt.Store) {
	t.Helper()
	store, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := store.Namespace(boltstores.MemoryNamespace)
	if err != nil {
		t.Fatal(err)
	}
	return boltstores.NewMemoryStore(ns), store
}

func TestMemoryStoreContract(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) ports.MemoryBackend {
		m, store := openMemoryStore(t, t.TempDir())
		t.Cleanup(func() { store.Close() })
		return m
	})
}
