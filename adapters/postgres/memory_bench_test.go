package postgres_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/ports"
)

// BenchmarkMemoryDurableWrites measures committed writes on plain
// PostgreSQL 15 with 8 concurrent callers: memory_store's and kv_set's
// backend calls, as adapters/inmem's benchmark of the same name does for
// the embedded store. "one owner" serialises on the owner's row lock, the
// price of bounds that hold across replicas; "8 owners" is the same load
// spread over callers that do not contend. The pool has 8 connections.
func BenchmarkMemoryDurableWrites(b *testing.B) {
	dsn := plainMemoryDSN(b)
	for _, op := range []string{"memory_store", "kv_set"} {
		for _, owners := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/%d_owners", op, owners), func(b *testing.B) {
				pool, err := postgres.NewPool(context.Background(), dsn, postgres.WithMaxConns(8))
				if err != nil {
					b.Fatal(err)
				}
				defer pool.Close()
				m, err := postgres.NewMemoryStore(context.Background(), pool, postgres.MemoryConfig{Dimensions: memoryDims})
				if err != nil {
					b.Fatal(err)
				}
				lim := ports.MemoryLimits{MaxEntriesPerNamespace: 1 << 30, MaxNamespaces: 1 << 30, QuotaBytes: 1 << 40, MaxKeys: 1 << 30}
				run := time.Now().UnixNano() // fresh content and keys per run
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
						if op == "memory_store" {
							_, _, err = m.Store(ctx, owner, memorytest.Write(fmt.Sprintf("ns%d", i%8), content, time.Now()), lim)
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
			})
		}
	}
}
