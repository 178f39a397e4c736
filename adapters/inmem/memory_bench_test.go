package inmem_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// BenchmarkMemoryDurableWrites measures acknowledged (fsynced) writes with
// 8 concurrent callers: memory_store's and kv_set's backend calls.
func BenchmarkMemoryDurableWrites(b *testing.B) {
	for _, op := range []string{"memory_store", "kv_set"} {
		b.Run(op, func(b *testing.B) {
			m, store := openMemoryStore(b, b.TempDir())
			defer store.Close()
			lim := ports.MemoryLimits{MaxEntriesPerNamespace: 1 << 30, MaxNamespaces: 1 << 30, QuotaBytes: 1 << 40, MaxKeys: 1 << 30}
			var n atomic.Int64
			b.SetParallelism((8 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)) // at least 8 callers
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					i := n.Add(1)
					content := fmt.Sprintf("memory %d", i)
					var err error
					if op == "memory_store" {
						_, _, err = m.Store(ctx, "owner", memorytest.Write(fmt.Sprintf("ns%d", i%8), content, time.Now()), lim)
					} else {
						err = m.KVSet(ctx, "owner", ports.KVEntry{Key: fmt.Sprintf("k%d", i), Value: content, UpdatedAt: time.Now()}, lim)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
		})
	}
}
