package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/tasktest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// BenchmarkTimerLateness is the bbolt registry's benchmark of the same
// name on the shared store: 1,000 timers due over one second, 3 s ahead,
// and how late they fired (budget 1 s).
func BenchmarkTimerLateness(b *testing.B) {
	tasktest.BenchTimerLateness(b, func(b *testing.B) tasktest.ClosableRegistry {
		return openTaskRegistry(b, b.TempDir(), ports.TaskConfig{Limits: tasktest.LatenessLimits})
	}, 3*time.Second, 0, 10*time.Millisecond)
}

// BenchmarkTaskStart and BenchmarkTaskList are the bbolt registry's
// benchmarks of the same names (adapters/bolt/boltstores) on the shared
// store.
func BenchmarkTaskStart(b *testing.B) {
	r := openTaskRegistry(b, b.TempDir(), ports.TaskConfig{Limits: tasktest.BenchLimits, Workers: tasktest.BenchWorkers})
	defer r.Close(context.Background())
	tasktest.BenchStart(b, r)
}

func BenchmarkTaskList(b *testing.B) {
	r := openTaskRegistry(b, b.TempDir(), ports.TaskConfig{Limits: tasktest.BenchLimits, Workers: tasktest.BenchWorkers})
	defer r.Close(context.Background())
	tasktest.BenchList(b, r)
}
