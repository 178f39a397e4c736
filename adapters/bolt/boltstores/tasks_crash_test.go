package boltstores_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/tasktest"
	"github.com/arrowhead-go/arrowhead/ports"
)

const taskCrashChildEnv = "ARROWHEAD_TEST_TASK_CRASH_DIR"

// blockingWork never finishes on its own: the process dies under it.
func blockingWork(ctx context.Context, _ ports.TaskRun) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func crashConfig() ports.TaskConfig {
	return ports.TaskConfig{Limits: tasktest.Limits, Workers: map[string]ports.TaskWork{ports.TaskKindScan: blockingWork}}
}

// TestTaskCrashChild is the child of TestTaskSIGKILLRecovers: it starts a
// scan that never ends, schedules and cancels timers, prints each
// acknowledged id, and waits to be killed.
func TestTaskCrashChild(t *testing.T) {
	dir := os.Getenv(taskCrashChildEnv)
	if dir == "" {
		t.Skip("run by TestTaskSIGKILLRecovers")
	}
	ctx := context.Background()
	r := boltTasks{dir}.Open(t, crashConfig())
	scan, err := r.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: tasktest.Alice, Input: []byte(`{}`)})
	must(err)
	soon, err := r.Schedule(ctx, ports.NewTimer{Principal: tasktest.Alice, Payload: []byte(`{"late":true}`), DueAt: time.Now().Add(500 * time.Millisecond)})
	must(err)
	later, err := r.Schedule(ctx, ports.NewTimer{Principal: tasktest.Alice, Payload: []byte(`{}`), DueAt: time.Now().Add(time.Hour), Repeat: time.Hour})
	must(err)
	gone, err := r.Schedule(ctx, ports.NewTimer{Principal: tasktest.Alice, DueAt: time.Now().Add(400 * time.Millisecond)})
	must(err)
	_, err = r.Cancel(ctx, "alice", gone.ID)
	must(err)
	fmt.Printf("ack %s %s %s %s %d\n", scan.ID, soon.ID, later.ID, gone.ID, soon.DueAt.UnixNano())
	select {}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
}

func TestTaskSIGKILLRecovers(t *testing.T) {
	dir := t.TempDir()
	cmd, stdout := startCrashChild(t, "TestTaskCrashChild", taskCrashChildEnv, dir)
	var scan, soon, later, gone string
	var dueNanos int64
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "ack ") {
			if _, err := fmt.Sscanf(sc.Text(), "ack %s %s %s %s %d", &scan, &soon, &later, &gone, &dueNanos); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if scan == "" {
		t.Fatal("the child acknowledged nothing")
	}
	// The timer's due time passes while no process runs.
	time.Sleep(time.Until(time.Unix(0, dueNanos)) + 200*time.Millisecond)

	ctx := context.Background()
	r := boltTasks{dir}.Open(t, crashConfig())
	t.Cleanup(func() { _ = r.Close(ctx) })
	got, err := r.Get(ctx, "alice", scan)
	if err != nil || got.Status != ports.TaskFailed || got.Error != ports.TaskInterrupted {
		t.Fatalf("the scan killed under its worker = %+v, %v", got, err)
	}
	if got, err := r.Get(ctx, "alice", gone); err != nil || got.Status != ports.TaskCancelled {
		t.Fatalf("the cancelled timer = %+v, %v", got, err)
	}
	if got, err := r.Get(ctx, "alice", later); err != nil || got.Status != ports.TaskWorking || got.Repeat != time.Hour {
		t.Fatalf("the pending timer = %+v, %v", got, err)
	}
	deadline := time.Now().Add(tasktest.Timeout)
	for {
		got, err := r.Get(ctx, "alice", soon)
		if err == nil && got.Status == ports.TaskCompleted {
			if string(got.Result) != `{"late":true}` || !got.UpdatedAt.After(time.Unix(0, dueNanos)) {
				t.Fatalf("the late timer = %+v", got)
			}
			break
		}
		if time.Now().After(deadline) || err != nil && !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("the late timer never fired: %+v, %v", got, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
