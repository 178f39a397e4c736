package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/adapters/postgres"
)

// BenchmarkMemoryDurableWrites measures committed writes on plain
// PostgreSQL 15 with 8 concurrent callers: memory_store's and kv_set's
// backend calls, as the benchmarks of the same name in adapters/sqlite
// and adapters/bolt/boltstores do for the embedded stores. "1_owners"
// serialises on the owner's row lock, the price of bounds that hold
// across replicas; "8_owners" is the same load spread over callers that
// do not contend. The pool has 8 connections.
// Whether a commit is durable is the server's setting: .ci/postgres.sh
// runs with fsync and synchronous_commit off.
func BenchmarkMemoryDurableWrites(b *testing.B) {
	dsn := plainMemoryDSN(b)
	for _, op := range []string{memorytest.OpStore, memorytest.OpKVSet} {
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
				memorytest.BenchDurableWrites(b, m, op, owners)
			})
		}
	}
}
