package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/tasktest"
	"github.com/arrowhead-go/arrowhead/internal/pgtest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// TestFaultScanFinishingWhilePostgresIsDownIsSettled: a scan's work ends
// while PostgreSQL is stopped. The worker keeps the outcome and settles the
// task (row and job together) once PostgreSQL is back: the task ends
// completed with its result, its job is completed, and the owner's running
// count is free again.
func TestFaultScanFinishingWhilePostgresIsDownIsSettled(t *testing.T) {
	srv := pgtest.StartServer(t)
	migrateState(t, srv.DSN())
	st := pgTasks{dsn: srv.DSN()}
	ctx := context.Background()
	running, release := make(chan struct{}, 1), make(chan struct{})
	work := func(ctx context.Context, run ports.TaskRun) ([]byte, error) {
		// Only the first run is awaited. The scans started after the
		// outage run this too, and one blocked on a full channel would
		// hold River's stop (and so reg.Close) for ever.
		select {
		case running <- struct{}{}:
		default:
		}
		<-release
		return []byte(`{"findings":0}`), nil
	}
	cfg := ports.TaskConfig{Limits: tasktest.Limits, Workers: map[string]ports.TaskWork{ports.TaskKindScan: work}}
	reg := st.open(t, cfg)
	defer reg.Close(ctx)

	task, err := reg.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: tasktest.Alice, Input: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-running:
	case <-time.After(tasktest.Timeout):
		t.Fatal("the task never ran")
	}

	srv.Stop()
	close(release)
	// The worker's first attempts at settling fail now.
	time.Sleep(time.Second)
	if _, err := reg.Get(ctx, "alice", task.ID); err == nil {
		t.Fatal("Get answered with PostgreSQL stopped")
	}
	srv.Start()
	back := time.Now()

	var got ports.Task
	if !pgtest.Retry(10*time.Second, func() bool {
		got, err = reg.Get(ctx, "alice", task.ID)
		return err == nil && got.Status != ports.TaskWorking
	}) {
		t.Fatalf("the task is still %q (%v) 10 s after PostgreSQL returned", got.Status, err)
	}
	t.Logf("settled %v after PostgreSQL returned", time.Since(back).Round(time.Millisecond))
	if got.Status != ports.TaskCompleted || string(got.Result) != `{"findings":0}` {
		t.Fatalf("the task ended %+v, want completed with the work's result", got)
	}
	var state string
	if err := reg.pool.pool.QueryRow(ctx, `SELECT j.state FROM river_job j JOIN `+tasksTable+` t ON t.job_id = j.id WHERE t.id = $1`, task.ID).Scan(&state); err != nil || state != "completed" {
		t.Fatalf("the task's job is %q (%v), want completed", state, err)
	}
	// Nothing counts against alice's running tasks any more.
	for i := 0; i < tasktest.Limits.MaxRunningPerOwner; i++ {
		if _, err := reg.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: tasktest.Alice, Input: []byte(`{}`)}); err != nil {
			t.Fatalf("start %d after the outage: %v", i+1, err)
		}
	}
}

// TestIntegrationReconcilerSettlesTasksWhoseJobIsOver: task rows left
// working behind a finished or vanished job (what an older version, or a
// worker that gave up, leaves) are settled as interrupted by the
// reconciler; a task whose job is still queued is left alone.
func TestIntegrationReconcilerSettlesTasksWhoseJobIsOver(t *testing.T) {
	db := requireDB(t)
	st := newPGTasks(t, db)
	ctx := context.Background()
	block := make(chan struct{})
	defer close(block)
	work := func(ctx context.Context, run ports.TaskRun) ([]byte, error) { <-block; return nil, nil }
	reg := st.open(t, ports.TaskConfig{Limits: tasktest.Limits, Workers: map[string]ports.TaskWork{ports.TaskKindScan: work}})
	defer reg.Close(ctx)
	// Stop River here (and there is no other replica): the jobs stay
	// where the test puts them.
	if err := reg.client.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 3 {
		task, err := reg.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: tasktest.Alice, Input: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := reg.pool.pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	// The first one's job completed apart from its row; the second's is gone.
	exec(`UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = (SELECT job_id FROM `+tasksTable+` WHERE id = $1)`, ids[0])
	exec(`DELETE FROM river_job WHERE id = (SELECT job_id FROM `+tasksTable+` WHERE id = $1)`, ids[1])

	if err := (&reconcileWorker{r: reg.TaskRegistry}).Work(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for i, want := range []ports.TaskStatus{ports.TaskFailed, ports.TaskFailed, ports.TaskWorking} {
		got, err := reg.Get(ctx, "alice", ids[i])
		if err != nil || got.Status != want {
			t.Fatalf("task %d is %+v (%v), want %s", i, got, err, want)
		}
		if want == ports.TaskFailed && got.Error != ports.TaskInterrupted {
			t.Fatalf("task %d failed with %q, want %q", i, got.Error, ports.TaskInterrupted)
		}
	}
}
