package sqlite_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/adapters/tasktest"
	"github.com/arrowhead-go/arrowhead/ports"
)

const boltTasksChildEnv = "ARROWHEAD_SQLITE_TEST_BOLT_TASKS_DIR"

// boltTaskIDs are the tasks TestBoltTasksChild left in the bbolt file.
type boltTaskIDs struct {
	Done, Working, Cancelled, Soon, Later string
	SoonDue, LaterDue                     time.Time
}

// TestBoltTasksChild is the previous release's server for
// TestImportBoltTasksKeepsTimersAndSettlesWork: it leaves a completed
// task, a working one, a cancelled timer and two pending timers in the
// bbolt file, prints their ids, and waits to be SIGKILLed.
func TestBoltTasksChild(t *testing.T) {
	dir := os.Getenv(boltTasksChildEnv)
	if dir == "" {
		t.Skip("run by TestImportBoltTasksKeepsTimersAndSettlesWork")
	}
	ctx := context.Background()
	store, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := store.Namespace(boltstores.TasksNamespace)
	if err != nil {
		t.Fatal(err)
	}
	work := func(ctx context.Context, run ports.TaskRun) ([]byte, error) {
		if string(run.Task.Input) == `"done"` {
			return []byte(`{"kept":true}`), nil
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	r, err := boltstores.OpenTaskRegistry(ctx, ns, ports.TaskConfig{Limits: tasktest.Limits, Workers: map[string]ports.TaskWork{ports.TaskKindScan: work}})
	if err != nil {
		t.Fatal(err)
	}
	alice := tasktest.Alice
	var ids boltTaskIDs
	done, err := r.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: alice, Input: []byte(`"done"`)})
	if err != nil {
		t.Fatal(err)
	}
	ids.Done = done.ID
	for {
		if got, _ := r.Get(ctx, "alice", done.ID); got.Status == ports.TaskCompleted {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	working, err := r.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: alice, Input: []byte(`"block"`)})
	if err != nil {
		t.Fatal(err)
	}
	ids.Working = working.ID
	cancelled, err := r.Schedule(ctx, ports.NewTimer{Principal: alice, Payload: []byte(`{}`), DueAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Cancel(ctx, "alice", cancelled.ID); err != nil {
		t.Fatal(err)
	}
	ids.Cancelled = cancelled.ID
	// Due after the kill: the bbolt registry never fires it.
	soon, err := r.Schedule(ctx, ports.NewTimer{Principal: alice, Payload: []byte(`{"late":true}`), DueAt: time.Now().Add(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	ids.Soon, ids.SoonDue = soon.ID, soon.DueAt
	later, err := r.Schedule(ctx, ports.NewTimer{Principal: alice, Payload: []byte(`{"n":2}`), DueAt: time.Now().Add(time.Hour), Repeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ids.Later, ids.LaterDue = later.ID, later.DueAt
	b, _ := json.Marshal(ids)
	fmt.Printf("ids %s\n", b)
	select {}
}

// The previous release's tasks move into the shared store once: pending
// timers stay pending and fire there, finished tasks keep their state and
// result, and the work the killed server was running is failed as
// interrupted, not left working for ever.
func TestImportBoltTasksKeepsTimersAndSettlesWork(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBoltTasksChild$")
	cmd.Env = append(os.Environ(), boltTasksChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var ids boltTaskIDs
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "ids "); ok {
			if err := json.Unmarshal([]byte(line), &ids); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if ids.Later == "" {
		t.Fatal("the previous release's server never acknowledged its tasks")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	ctx := context.Background()
	old, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	ns, err := old.Namespace(boltstores.TasksNamespace)
	if err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	if done, err := s.TasksImported(ctx); err != nil || done {
		t.Fatalf("TasksImported before = %v %v", done, err)
	}
	if imported, err := s.ImportBoltTasks(ctx, ns); err != nil || !imported {
		t.Fatalf("ImportBoltTasks = %v %v", imported, err)
	}
	if imported, err := s.ImportBoltTasks(ctx, ns); err != nil || imported {
		t.Fatalf("second ImportBoltTasks = %v %v", imported, err)
	}
	if done, err := s.TasksImported(ctx); err != nil || !done {
		t.Fatalf("TasksImported after = %v %v", done, err)
	}

	r, err := sqlite.OpenTaskRegistry(ctx, s, ports.TaskConfig{Limits: tasktest.Limits})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	get := func(id string) ports.Task {
		t.Helper()
		got, err := r.Get(ctx, "alice", id)
		if err != nil {
			t.Fatalf("Get(%s) after the import: %v", id, err)
		}
		return got
	}
	if got := get(ids.Done); got.Status != ports.TaskCompleted || string(got.Result) != `{"kept":true}` {
		t.Fatalf("completed task = %+v", got)
	}
	if got := get(ids.Working); got.Status != ports.TaskFailed || got.Error != ports.TaskInterrupted {
		t.Fatalf("working task = %+v", got)
	}
	if got := get(ids.Cancelled); got.Status != ports.TaskCancelled {
		t.Fatalf("cancelled timer = %+v", got)
	}
	if got := get(ids.Later); got.Status != ports.TaskWorking || !got.DueAt.Equal(ids.LaterDue) || got.Repeat != time.Hour ||
		string(got.Input) != `{"n":2}` || got.Principal.Subject != "alice" || !got.Principal.HasScope("docs:scan") {
		t.Fatalf("pending timer = %+v", got)
	}
	deadline := time.Now().Add(tasktest.Timeout)
	for {
		got := get(ids.Soon)
		if got.Status == ports.TaskCompleted {
			if string(got.Result) != `{"late":true}` || got.UpdatedAt.Before(ids.SoonDue) {
				t.Fatalf("imported timer fired as %+v", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the imported timer never fired: %+v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
