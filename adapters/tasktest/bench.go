package tasktest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// ClosableRegistry is a backend as the benchmarks open it: the registry
// and its Close.
type ClosableRegistry interface {
	ports.TaskRegistry
	Close(context.Context) error
}

// LatenessLimits are the bounds BenchTimerLateness needs a registry opened
// with: room for every timer it schedules.
var LatenessLimits = ports.TaskLimits{MaxRunningPerOwner: 1, MaxTimersPerOwner: latenessPerOwner,
	MaxFinishedPerOwner: latenessPerOwner, FinishedTTL: time.Hour}

const latenessOwners, latenessPerOwner = 50, 20

// BenchTimerLateness schedules 1,000 pending timers (50 owners of 20, one
// concurrent caller per owner) on a fresh registry from open per run, due
// over one second starting lead from now, and reports how late they fired:
// the firing time recorded by the registry minus the due time, as p50, p99
// and max. minLead is how much of lead must remain once every timer is
// scheduled (so none was due before the scan of pending timers began);
// poll is how often completion is checked.
func BenchTimerLateness(b *testing.B, open func(b *testing.B) ClosableRegistry, lead, minLead, poll time.Duration) {
	ctx := context.Background()
	var late []time.Duration
	for range b.N {
		r := open(b)
		start := time.Now().Add(lead)
		var wg sync.WaitGroup
		for o := range latenessOwners {
			wg.Go(func() {
				p := ports.NewPrincipal(fmt.Sprintf("owner-%d", o), "tasks:write")
				for i := range latenessPerOwner {
					due := start.Add(time.Duration(i*latenessOwners+o) * time.Millisecond)
					if _, err := r.Schedule(ctx, ports.NewTimer{Principal: p, Payload: []byte(`{"n":1}`), DueAt: due}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if time.Until(start) < minLead {
			b.Fatal("scheduling took longer than the lead time; lateness would be overstated")
		}
		deadline := time.Now().Add(time.Minute)
		for o := 0; o < latenessOwners; {
			tasks, _, err := r.List(ctx, fmt.Sprintf("owner-%d", o), latenessPerOwner)
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
			time.Sleep(poll)
		}
		_ = r.Close(ctx)
	}
	slices.Sort(late)
	b.ReportMetric(float64(late[len(late)/2].Microseconds())/1000, "p50-late-ms")
	b.ReportMetric(float64(late[len(late)*99/100].Microseconds())/1000, "p99-late-ms")
	b.ReportMetric(float64(late[len(late)-1].Microseconds())/1000, "max-late-ms")
}
