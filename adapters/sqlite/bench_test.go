package sqlite_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
)

// BenchmarkMemoryDurableWrites measures acknowledged (fsynced) writes with
// 8 concurrent callers in one process: memory_store's and kv_set's
// backend calls (adapters/bolt/boltstores has the same benchmark on bbolt).
func BenchmarkMemoryDurableWrites(b *testing.B) {
	for _, op := range []string{memorytest.OpStore, memorytest.OpKVSet} {
		b.Run(op, func(b *testing.B) {
			memorytest.BenchDurableWrites(b, sqlite.NewMemoryStore(openStore(b, b.TempDir())), op, 1)
		})
	}
}

// BenchmarkTwoProcessWrites measures the sum of acknowledged kv writes of
// two processes writing into one store at once, 8 callers each, over
// benchWindow per iteration.
func BenchmarkTwoProcessWrites(b *testing.B) {
	const benchWindow = 2 * time.Second
	var total atomic.Int64
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		helpers := []*helper{startHelper(b, dir), startHelper(b, dir)}
		// Opening is not writing: wait until both answer.
		for _, h := range helpers {
			if r := h.do(command{Op: "kv_get", Owner: "x", Key: "x"}); r.Err != "not found" {
				b.Fatalf("helper: %+v", r)
			}
		}
		var wg sync.WaitGroup
		start := time.Now()
		stop := start.Add(benchWindow)
		for j, h := range helpers {
			h.send(command{Op: "burst", Owner: "alice", Key: fmt.Sprintf("p%d", j)})
			wg.Go(func() {
				for {
					var r reply
					if err := h.out.Decode(&r); err != nil {
						return
					}
					if r.Err != "" {
						b.Errorf("helper %d: %s", j, r.Err)
						return
					}
					if time.Now().Before(stop) {
						total.Add(1)
					}
				}
			})
		}
		time.Sleep(benchWindow)
		elapsed += time.Since(start)
		for _, h := range helpers {
			_ = h.cmd.Process.Signal(syscall.SIGKILL)
		}
		wg.Wait()
	}
	b.ReportMetric(float64(total.Load())/elapsed.Seconds(), "writes/s")
}
