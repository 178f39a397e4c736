package tasktools_test

import (
	"slices"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/core/coretest"
)

// BenchmarkTaskGet polls one finished task through the whole guard chain
// in process, on the embedded registry holding a full owner's worth of
// tasks and timers, and reports the latency percentiles. The budget is
// 1 ms at p99.
func BenchmarkTaskGet(b *testing.B) {
	e := newEnv(b, "", false, nil, nil)
	id := e.must(b, alice, "task_schedule", map[string]any{"delay_seconds": 0, "payload": map[string]any{"note": "check build"}})["task_id"]
	for range 19 {
		e.must(b, alice, "task_schedule", map[string]any{"delay_seconds": 3600})
	}
	e.await(b, alice, id)
	args := map[string]any{"task_id": id}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, te := coretest.Call(b, e.app, alice, "task_get", args); te != nil {
			b.Fatal(te.Message)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}
