package sqlite_test

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/ports"
)

// openStore opens the store in dir, closed when the test ends.
func openStore(t testing.TB, dir string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMemoryStoreContract(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) ports.MemoryBackend {
		return sqlite.NewMemoryStore(openStore(t, t.TempDir()))
	})
}
