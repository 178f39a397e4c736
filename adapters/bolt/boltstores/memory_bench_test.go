package boltstores_test

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
)

// BenchmarkMemoryDurableWrites measures acknowledged (fsynced) writes with
// 8 concurrent callers: memory_store's and kv_set's backend calls.
func BenchmarkMemoryDurableWrites(b *testing.B) {
	for _, op := range []string{memorytest.OpStore, memorytest.OpKVSet} {
		b.Run(op, func(b *testing.B) {
			m, store := openMemoryStore(b, b.TempDir())
			defer store.Close()
			memorytest.BenchDurableWrites(b, m, op, 1)
		})
	}
}
