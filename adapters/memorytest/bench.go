package memorytest

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Benchmark operations: the backend calls of memory_store and kv_set.
const (
	OpStore = "memory_store"
	OpKVSet = "kv_set"
)

// BenchDurableWrites measures acknowledged writes of op to m with at least
// 8 concurrent callers, spread over owners owners, and reports writes/s.
// Contents and keys are fresh for every run, so a store that is reused
// across runs never dedups.
func BenchDurableWrites(b *testing.B, m ports.MemoryBackend, op string, owners int) {
	lim := ports.MemoryLimits{MaxEntriesPerNamespace: 1 << 30, MaxNamespaces: 1 << 30, QuotaBytes: 1 << 40, MaxKeys: 1 << 30}
	run := time.Now().UnixNano()
	var n atomic.Int64
	b.SetParallelism((8 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)) // at least 8 callers
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			i := n.Add(1)
			owner := fmt.Sprintf("owner%d", i%int64(owners))
			content := fmt.Sprintf("memory %d-%d", run, i)
			var err error
			if op == OpStore {
				_, _, err = m.Store(ctx, owner, Write(fmt.Sprintf("ns%d", i%8), content, time.Now()), lim)
			} else {
				err = m.KVSet(ctx, owner, ports.KVEntry{Key: fmt.Sprintf("k%d-%d", run, i), Value: content, UpdatedAt: time.Now()}, lim)
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
}
