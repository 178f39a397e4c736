package boltstores_test

import (
	"context"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/tasktest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// BenchmarkTimerLateness schedules 1,000 pending timers (50 owners of 20)
// due over the next second and reports how late they fired: the firing
// time recorded in the store minus the due time. The budget is 1 s. The
// first timer is due 3 s ahead, longer than scheduling all of them takes.
func BenchmarkTimerLateness(b *testing.B) {
	tasktest.BenchTimerLateness(b, func(b *testing.B) tasktest.ClosableRegistry {
		return openTaskRegistry(b, b.TempDir(), ports.TaskConfig{Limits: tasktest.LatenessLimits})
	}, 3*time.Second, 0, 10*time.Millisecond)
}

// BenchmarkTaskStart and BenchmarkTaskList measure the bbolt registry's
// Start and List (tasktest.BenchStart, BenchList), the figures the shared
// store's registry is held against.
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
