package postgres

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/tasktest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// BenchmarkIntegrationTimerLateness schedules 1,000 pending timers (50
// owners of 20) due over one second, beyond River's scheduler interval (so
// each is a job scheduled at its due time, the path of every timer due
// more than 5 s ahead), and reports how late they fired: the firing time
// recorded in the row minus the due time. The budget is 1 s.
func BenchmarkIntegrationTimerLateness(b *testing.B) {
	db := requireDB(b)
	tasktest.BenchTimerLateness(b, func(b *testing.B) tasktest.ClosableRegistry {
		dsn := withParams(b, db.dsn, "search_path", db.schema(b, ""))
		migrateState(b, dsn)
		return pgTasks{dsn: dsn}.open(b, ports.TaskConfig{Limits: tasktest.LatenessLimits})
	}, schedulerLead+5*time.Second, schedulerLead, 50*time.Millisecond)
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
