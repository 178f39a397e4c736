package inmem_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// leadTime is how far ahead the first timer is due: longer than
// scheduling all of them takes, so every one is pending at the start.
const leadTime = 3 * time.Second

// BenchmarkTimerLateness schedules 1,000 pending timers (50 owners of 20)
// due over the next second and reports how late they fired: the firing
// time recorded in the store minus the due time. The budget is 1 s.
func BenchmarkTimerLateness(b *testing.B) {
	const owners, perOwner = 50, 20
	ctx := context.Background()
	var late []time.Duration
	for range b.N {
		r := openTaskRegistry(b, b.TempDir(), ports.TaskConfig{Limits: ports.TaskLimits{
			MaxRunningPerOwner: 1, MaxTimersPerOwner: perOwner, MaxFinishedPerOwner: perOwner, FinishedTTL: time.Hour}})
		// Callers schedule concurrently, as they would: one per owner.
		start := time.Now().Add(leadTime)
		var wg sync.WaitGroup
		for o := range owners {
			wg.Go(func() {
				p := ports.NewPrincipal(fmt.Sprintf("owner-%d", o), "tasks:write")
				for i := range perOwner {
					due := start.Add(time.Duration(i*owners+o) * time.Millisecond)
					if _, err := r.Schedule(ctx, ports.NewTimer{Principal: p, Payload: []byte(`{"n":1}`), DueAt: due}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if time.Now().After(start) {
			b.Fatal("scheduling took longer than the lead time; lateness would be overstated")
		}
		deadline := time.Now().Add(time.Minute)
		for o := 0; o < owners; {
			tasks, _, err := r.List(ctx, fmt.Sprintf("owner-%d", o), perOwner)
			if err != nil {
				b.Fatal(err)
			}
			if !slices.ContainsFunc(tasks, func(t ports.Task) bool { return t.Status == ports.TaskWorking }) {
				for _, t := range tasks {
					late = append(late, t.UpdatedAt.Sub(t.DueAt))
				}
				o++
				continue
			}
			if time.Now().After(deadline) {
				b.Fatal("the timers never all fired")
			}
			time.Sleep(10 * time.Millisecond)
		}
		_ = r.Close(ctx)
	}
	slices.Sort(late)
	b.ReportMetric(float64(late[len(late)/2].Microseconds())/1000, "p50-late-ms")
	b.ReportMetric(float64(late[len(late)*99/100].Microseconds())/1000, "p99-late-ms")
	b.ReportMetric(float64(late[len(late)-1].Microseconds())/1000, "max-late-ms")
}
