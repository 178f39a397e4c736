package tasktest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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

// BenchLimits are the bounds BenchStart and BenchList open a registry
// with: no start is refused for running tasks.
var BenchLimits = ports.TaskLimits{MaxRunningPerOwner: 1 << 20, MaxTimersPerOwner: 20, MaxFinishedPerOwner: 50, FinishedTTL: time.Hour}

// BenchWorkers serve a scan that returns at once.
var BenchWorkers = map[string]ports.TaskWork{ports.TaskKindScan: func(context.Context, ports.TaskRun) ([]byte, error) {
	return []byte(`{}`), nil
}}

// BenchStart starts scans from 8 concurrent callers over 64 owners, each
// durable when Start returns (its work completes in the background, and
// that write competes), and reports Start's p50 and p99 latency.
func BenchStart(b *testing.B, r ports.TaskRegistry) {
	ctx := context.Background()
	var mu sync.Mutex
	var took []time.Duration
	var n atomic.Int64
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			p := ports.NewPrincipal(fmt.Sprintf("owner-%d", n.Add(1)%64), "docs:scan")
			t0 := time.Now()
			if _, err := r.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: p, Input: []byte(`{}`)}); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		took = append(took, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	reportLatency(b, took)
}

// BenchList lists one owner's 50 finished tasks and 20 pending timers
// (the default bounds' worth) from 8 concurrent callers and reports
// List's p50 and p99 latency.
func BenchList(b *testing.B, r ports.TaskRegistry) {
	ctx := context.Background()
	p := ports.NewPrincipal("lister", "docs:scan")
	for range BenchLimits.MaxFinishedPerOwner {
		if _, err := r.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: p, Input: []byte(`{}`)}); err != nil {
			b.Fatal(err)
		}
	}
	for range BenchLimits.MaxTimersPerOwner {
		if _, err := r.Schedule(ctx, ports.NewTimer{Principal: p, Payload: []byte(`{}`), DueAt: time.Now().Add(time.Hour)}); err != nil {
			b.Fatal(err)
		}
	}
	want := BenchLimits.MaxFinishedPerOwner + BenchLimits.MaxTimersPerOwner
	for deadline := time.Now().Add(Timeout); ; {
		list, _, err := r.List(ctx, "lister", -1)
		if err != nil {
			b.Fatal(err)
		}
		if len(list) == want && !slices.ContainsFunc(list, func(t ports.Task) bool { return t.Status == ports.TaskWorking && t.Kind != ports.TaskKindTimer }) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the tasks never all completed: %d listed", len(list))
		}
		time.Sleep(10 * time.Millisecond)
	}
	var mu sync.Mutex
	var took []time.Duration
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			t0 := time.Now()
			list, _, err := r.List(ctx, "lister", -1)
			if err != nil || len(list) != want {
				b.Errorf("List = %d tasks, %v", len(list), err)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		took = append(took, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	reportLatency(b, took)
}

func reportLatency(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
}
