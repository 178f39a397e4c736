package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/adapters/tasktest"
	"github.com/arrowhead-go/arrowhead/migrations"
	"github.com/arrowhead-go/arrowhead/ports"
)

// migrateState applies what `arrowhead migrate` applies through
// ARROWHEAD_STATE_DSN: 003_state and River's tables.
func migrateState(t testing.TB, dsn string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, _, err := migrations.Apply(ctx, c, migrations.Config{Columns: migrations.DefaultColumns(), State: true}); err != nil {
		t.Fatalf("migrating the state tables: %v", err)
	}
	if _, err := MigrateTaskQueue(ctx, c); err != nil {
		t.Fatalf("migrating River: %v", err)
	}
}

// pgTasks is one migrated schema; each Open is a replica (or a restart)
// with a pool and a River client of its own.
type pgTasks struct{ dsn string }

type openPGTasks struct {
	*TaskRegistry
	pool *Pool
}

func (o openPGTasks) Close(ctx context.Context) error {
	err := o.TaskRegistry.Close(ctx)
	o.pool.Close()
	return err
}

func (s pgTasks) Open(t *testing.T, cfg ports.TaskConfig) tasktest.Registry { return s.open(t, cfg) }

// open is Open for tests and benchmarks alike.
func (s pgTasks) open(t testing.TB, cfg ports.TaskConfig) openPGTasks {
	t.Helper()
	pool, err := NewPool(context.Background(), s.dsn, WithMaxConns(8))
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenTaskRegistry(context.Background(), pool, cfg)
	if err != nil {
		pool.Close()
		t.Fatal(err)
	}
	return openPGTasks{r, pool}
}

func newPGTasks(t *testing.T, db testDB) pgTasks {
	t.Helper()
	dsn := withParams(t, db.dsn, "search_path", db.schema(t, ""))
	migrateState(t, dsn)
	return pgTasks{dsn: dsn}
}

func TestIntegrationTaskRegistryMeetsTheContract(t *testing.T) {
	db := requireDB(t)
	tasktest.Run(t, func(t *testing.T) tasktest.Storage { return newPGTasks(t, db) })
}

func TestIntegrationTaskRegistryRefusesAnUnmigratedDatabase(t *testing.T) {
	db := requireDB(t)
	pool, err := NewPool(context.Background(), withParams(t, db.dsn, "search_path", db.schema(t, "")))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := OpenTaskRegistry(context.Background(), pool, ports.TaskConfig{Limits: tasktest.Limits}); !errors.Is(err, ErrTasksNotMigrated) {
		t.Fatalf("OpenTaskRegistry before migrate = %v", err)
	}
}

// TestIntegrationTasksAcrossReplicas runs three registries on one database,
// as three replicas: a task started on A runs on whichever claims it, is
// polled on B and cancelled on C, and its work stops; a timer scheduled on
// A fires after A is gone.
func TestIntegrationTasksAcrossReplicas(t *testing.T) {
	db := requireDB(t)
	st := newPGTasks(t, db)
	ctx := context.Background()
	runs := make(chan ports.TaskRun, 8)
	stopped := make(chan error, 8)
	work := func(ctx context.Context, run ports.TaskRun) ([]byte, error) {
		runs <- run
		for {
			if err := run.Check(ctx); err != nil {
				stopped <- err
				return nil, err
			}
			select {
			case <-ctx.Done():
				stopped <- ctx.Err()
				return nil, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	cfg := ports.TaskConfig{Limits: tasktest.Limits, Workers: map[string]ports.TaskWork{ports.TaskKindScan: work}}
	a, b, c := st.Open(t, cfg), st.Open(t, cfg), st.Open(t, cfg)
	defer b.Close(ctx)
	defer c.Close(ctx)

	task, err := a.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: tasktest.Alice, Input: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case run := <-runs:
		if run.Task.ID != task.ID || run.Task.Principal.Subject != "alice" {
			t.Fatalf("ran %+v", run.Task)
		}
	case <-time.After(tasktest.Timeout):
		t.Fatal("no replica ran the task")
	}
	if got, err := b.Get(ctx, "alice", task.ID); err != nil || got.Status != ports.TaskWorking {
		t.Fatalf("B polls %+v, %v", got, err)
	}
	if l, _, err := c.List(ctx, "alice", 10); err != nil || len(l) != 1 || l[0].ID != task.ID {
		t.Fatalf("C lists %+v, %v", l, err)
	}
	if got, err := c.Cancel(ctx, "alice", task.ID); err != nil || got.Status != ports.TaskCancelled {
		t.Fatalf("C cancels: %+v, %v", got, err)
	}
	if got, err := b.Get(ctx, "alice", task.ID); err != nil || got.Status != ports.TaskCancelled {
		t.Fatalf("B after the cancel: %+v, %v", got, err)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, ports.ErrTaskCancelled) {
			t.Fatalf("the work stopped with %v, want ErrTaskCancelled", err)
		}
	case <-time.After(tasktest.Timeout):
		t.Fatal("the cancelled work never stopped")
	}

	// Due beyond River's scheduler interval: a scheduled job no replica
	// holds before its time.
	timer, err := a.Schedule(ctx, ports.NewTimer{Principal: tasktest.Alice, Payload: []byte(`{"wake":1}`), DueAt: time.Now().Add(schedulerLead + time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(tasktest.Timeout)
	for {
		got, err := c.Get(ctx, "alice", timer.ID)
		if err == nil && got.Status == ports.TaskCompleted {
			if string(got.Result) != `{"wake":1}` {
				t.Fatalf("fired %+v", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the timer never fired after A stopped: %+v, %v", got, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
