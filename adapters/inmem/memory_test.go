package inmem_test

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/inmem"
	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/ports"
)

func openMemoryStore(t testing.TB, dir string) (*inmem.MemoryStore, *bolt.Store) {
	t.Helper()
	store, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := store.Namespace(inmem.MemoryNamespace)
	if err != nil {
		t.Fatal(err)
	}
	return inmem.NewMemoryStore(ns), store
}

func TestMemoryStoreContract(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) ports.MemoryBackend {
		m, store := openMemoryStore(t, t.TempDir())
		t.Cleanup(func() { store.Close() })
		return m
	})
}
