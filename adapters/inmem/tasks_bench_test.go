package inmem_test

import (
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
