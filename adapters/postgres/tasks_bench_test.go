package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// BenchmarkIntegrationTimerLateness schedules 1,000 pending timers (50
// owners of 20) due over one second, beyond River's scheduler interval (so
// each is a job scheduled at its due time, the path of every timer due
// more than 5 s ahead), and reports how late they fired: the firing time
// recorded in the row minus the due time. The budget is 1 s.
func BenchmarkIntegrationTimerLateness(b *testing.B) {
	const owners, perOwner = 50, 20
	db := requireDB(b)
	ctx := context.Background()
	var late []time.Duration
	for range b.N {
		dsn := withParams(b, db.dsn, "search_path", db.schema(b, ""))
		migrateState(b, dsn)
		r := pgTasks{dsn: dsn}.open(b, ports.TaskConfig{Limits: ports.TaskLimits{
			MaxRunningPerOwner: 1, MaxTimersPerOwner: perOwner, MaxFinishedPerOwner: perOwner, FinishedTTL: time.Hour}})
		start := time.Now().Add(schedulerLead + 5*time.Second)
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
		if time.Until(start) < schedulerLead {
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
			time.Sleep(50 * time.Millisecond)
		}
		_ = r.Close(ctx)
	}
	slices.Sort(late)
	b.ReportMetric(float64(late[len(late)/2].Microseconds())/1000, "p50-late-ms")
	b.ReportMetric(float64(late[len(late)*99/100].Microseconds())/1000, "p99-late-ms")
	b.ReportMetric(float64(late[len(late)-1].Microseconds())/1000, "max-late-ms")
}

// BenchmarkIntegrationTaskGet reads one task by owner and id, in parallel,
// and reports the p99 latency of a Get against PostgreSQL on loopback.
func BenchmarkIntegrationTaskGet(b *testing.B) {
	db := requireDB(b)
	dsn := withParams(b, db.dsn, "search_path", db.schema(b, ""))
	migrateState(b, dsn)
	ctx := context.Background()
	r := pgTasks{dsn: dsn}.open(b, ports.TaskConfig{Limits: ports.TaskLimits{
		MaxRunningPerOwner: 1, MaxTimersPerOwner: 1, MaxFinishedPerOwner: 1, FinishedTTL: time.Hour}})
	defer r.Close(ctx)
	task, err := r.Schedule(ctx, ports.NewTimer{Principal: ports.NewPrincipal("alice", "tasks:write"), Payload: []byte(`{}`), DueAt: time.Now().Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var took []time.Duration
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			t0 := time.Now()
			if _, err := r.Get(ctx, "alice", task.ID); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		took = append(took, mine...)
		mu.Unlock()
	})
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
}
