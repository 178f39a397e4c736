package sqlite_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/adapters/tasktest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The task tests re-execute this test binary as other processes, like
// the store's (process_test.go): with taskHelperEnv set, TestMain opens
// the task registry in the directory it names, with a lease of
// taskLeaseEnv milliseconds, and serves taskCommands, one JSON line each.
const (
	taskHelperEnv = "ARROWHEAD_SQLITE_TEST_TASK_HELPER"
	taskLeaseEnv  = "ARROWHEAD_SQLITE_TEST_TASK_LEASE_MS"
)

// testLease is the lease of every process in these tests: short, so a
// killed process is settled within seconds.
const testLease = time.Second

type taskCommand struct {
	Op      string `json:"op"`
	Owner   string `json:"owner,omitempty"`
	ID      string `json:"id,omitempty"`
	DueMS   int    `json:"due_ms,omitempty"`
	Repeat  int    `json:"repeat_ms,omitempty"`
	Payload string `json:"payload,omitempty"`
}

type taskReply struct {
	Err   string       `json:"err,omitempty"`
	Task  ports.Task   `json:"task"`
	Tasks []ports.Task `json:"tasks,omitempty"`
	IDs   []string     `json:"ids,omitempty"`
}

// stoppingWork runs until its context ends, never calling Check: it
// proves the context itself carries a cancellation from anywhere.
type stoppingWork struct {
	mu      sync.Mutex
	stopped []string
	started chan string
}

func newStoppingWork() *stoppingWork { return &stoppingWork{started: make(chan string, 64)} }

func (w *stoppingWork) work(ctx context.Context, run ports.TaskRun) ([]byte, error) {
	w.started <- run.Task.ID
	<-ctx.Done()
	w.mu.Lock()
	w.stopped = append(w.stopped, run.Task.ID)
	w.mu.Unlock()
	return nil, ctx.Err()
}

func (w *stoppingWork) ids() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.stopped...)
}

func (w *stoppingWork) config() ports.TaskConfig {
	return ports.TaskConfig{Limits: tasktest.Limits, Workers: map[string]ports.TaskWork{ports.TaskKindScan: w.work}}
}

// firings collects the timers one process fired.
type firings struct {
	mu  sync.Mutex
	ids []string
}

func (f *firings) add(t ports.Task) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids = append(f.ids, t.ID)
}

func (f *firings) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ids...)
}

func serveTaskHelper(dir string) int {
	lease, _ := strconv.Atoi(os.Getenv(taskLeaseEnv))
	s, err := sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	defer s.Close()
	ctx := context.Background()
	w, fired := newStoppingWork(), &firings{}
	r, err := sqlite.OpenTaskRegistryWith(ctx, s, w.config(), time.Duration(lease)*time.Millisecond, fired.add)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	defer r.Close(ctx)
	out := json.NewEncoder(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var c taskCommand
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			return 3
		}
		var rep taskReply
		var err error
		p := ports.NewPrincipal(c.Owner, "tasks:write")
		switch c.Op {
		case "start":
			rep.Task, err = r.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: p, Input: []byte(`{}`)})
			if err == nil {
				<-w.started
			}
		case "schedule":
			rep.Task, err = r.Schedule(ctx, ports.NewTimer{Principal: p, Payload: []byte(c.Payload),
				DueAt: time.Now().Add(time.Duration(c.DueMS) * time.Millisecond), Repeat: time.Duration(c.Repeat) * time.Millisecond})
		case "get":
			rep.Task, err = r.Get(ctx, c.Owner, c.ID)
		case "list":
			rep.Tasks, _, err = r.List(ctx, c.Owner, -1)
		case "cancel":
			rep.Task, err = r.Cancel(ctx, c.Owner, c.ID)
		case "stopped":
			rep.IDs = w.ids()
		case "fired":
			rep.IDs = fired.list()
		default:
			err = fmt.Errorf("unknown op %q", c.Op)
		}
		rep.Err = errText(err)
		_ = out.Encode(rep)
	}
	return 0
}

// taskHelper is a running helper process.
type taskHelper struct {
	t   testing.TB
	cmd *exec.Cmd
	in  io.WriteCloser
	out *json.Decoder
}

func startTaskHelper(t testing.TB, dir string) *taskHelper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), taskHelperEnv+"="+dir, taskLeaseEnv+"="+strconv.Itoa(int(testLease.Milliseconds())))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return &taskHelper{t: t, cmd: cmd, in: in, out: json.NewDecoder(out)}
}

func (h *taskHelper) do(c taskCommand) taskReply {
	h.t.Helper()
	b, _ := json.Marshal(c)
	if _, err := h.in.Write(append(b, '\n')); err != nil {
		h.t.Fatal(err)
	}
	var r taskReply
	if err := h.out.Decode(&r); err != nil {
		h.t.Fatalf("task helper %s: %v", c.Op, err)
	}
	return r
}

func (h *taskHelper) kill() {
	h.t.Helper()
	if err := h.cmd.Process.Kill(); err != nil { // SIGKILL
		h.t.Fatal(err)
	}
	_ = h.cmd.Wait()
}

// openTestTasks opens a registry over dir in this process with the test
// lease, recording the timers it fires.
func openTestTasks(t *testing.T, dir string, cfg ports.TaskConfig) (*sqlite.TaskRegistry, *firings) {
	t.Helper()
	fired := &firings{}
	r, err := sqlite.OpenTaskRegistryWith(context.Background(), openStore(t, dir), cfg, testLease, fired.add)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	return r, fired
}

// waitFor polls cond until it holds or tasktest.Timeout passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(tasktest.Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never happened", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// A task started in one process is read, listed and cancelled from the
// other, both ways, and the cancellation ends the work's context in the
// process that runs it (the work never calls Check).
func TestTasksAreSharedBetweenProcesses(t *testing.T) {
	dir := t.TempDir()
	other := startTaskHelper(t, dir)
	w := newStoppingWork()
	r, _ := openTestTasks(t, dir, w.config())
	ctx := context.Background()

	there := other.do(taskCommand{Op: "start", Owner: "alice"})
	if there.Err != "" {
		t.Fatal(there.Err)
	}
	got, err := r.Get(ctx, "alice", there.Task.ID)
	if err != nil || got.Status != ports.TaskWorking || got.Kind != ports.TaskKindScan {
		t.Fatalf("Get here of the helper's task = %+v, %v", got, err)
	}
	if list, _, err := r.List(ctx, "alice", 10); err != nil || len(list) != 1 || list[0].ID != there.Task.ID {
		t.Fatalf("List here = %+v, %v", list, err)
	}
	if _, err := r.Get(ctx, "bob", there.Task.ID); errText(err) != "not found" {
		t.Fatalf("another owner reads it: %v", err)
	}
	if got, err := r.Cancel(ctx, "alice", there.Task.ID); err != nil || got.Status != ports.TaskCancelled {
		t.Fatalf("Cancel here = %+v, %v", got, err)
	}
	waitFor(t, "the helper's work stopping", func() bool {
		return contains(other.do(taskCommand{Op: "stopped"}).IDs, there.Task.ID)
	})
	if rep := other.do(taskCommand{Op: "get", Owner: "alice", ID: there.Task.ID}); rep.Task.Status != ports.TaskCancelled {
		t.Fatalf("the helper reads %+v", rep)
	}

	here, err := r.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: tasktest.Alice, Input: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	<-w.started
	if rep := other.do(taskCommand{Op: "list", Owner: "alice"}); rep.Err != "" || len(rep.Tasks) != 2 {
		t.Fatalf("the helper lists %+v", rep)
	}
	if rep := other.do(taskCommand{Op: "cancel", Owner: "alice", ID: here.ID}); rep.Err != "" || rep.Task.Status != ports.TaskCancelled {
		t.Fatalf("the helper's Cancel = %+v", rep)
	}
	waitFor(t, "this process's work stopping", func() bool { return contains(w.ids(), here.ID) })
	if got, _ := r.Get(ctx, "alice", here.ID); got.Status != ports.TaskCancelled {
		t.Fatalf("after the work stopped = %+v", got)
	}
}

// Timers scheduled in a process that is then SIGKILLed fire, each exactly
// once, in the survivors: one, or two racing for them. A repeating one
// leaves exactly one next occurrence.
func TestTimersOfAKilledProcessFireOnceInTheSurvivors(t *testing.T) {
	for _, survivors := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d survivors", survivors), func(t *testing.T) {
			dir := t.TempDir()
			var alive []*taskHelper
			for range survivors {
				alive = append(alive, startTaskHelper(t, dir))
			}
			doomed := startTaskHelper(t, dir)
			// Ten owners with a full set of timers each, all due at about
			// the same moment, so the survivors race for every one.
			var ids []string
			owners := map[string]string{}
			for o := range 10 {
				owner := fmt.Sprintf("owner-%d", o)
				for i := range tasktest.Limits.MaxTimersPerOwner {
					c := taskCommand{Op: "schedule", Owner: owner, DueMS: 1500, Payload: fmt.Sprintf(`{"n":%d}`, i)}
					if i == 0 {
						c.Repeat = int(time.Hour.Milliseconds())
					}
					rep := doomed.do(c)
					if rep.Err != "" {
						t.Fatal(rep.Err)
					}
					ids = append(ids, rep.Task.ID)
					owners[rep.Task.ID] = owner
				}
			}
			doomed.kill()
			fired := map[string]int{}
			waitFor(t, "every timer firing", func() bool {
				clear(fired)
				for _, h := range alive {
					for _, id := range h.do(taskCommand{Op: "fired"}).IDs {
						fired[id]++
					}
				}
				return len(fired) == len(ids)
			})
			time.Sleep(time.Second) // two polls more: a second firing would show
			clear(fired)
			for _, h := range alive {
				for _, id := range h.do(taskCommand{Op: "fired"}).IDs {
					fired[id]++
				}
			}
			for _, id := range ids {
				if fired[id] != 1 {
					t.Fatalf("timer fired %d times; want once (all: %v)", fired[id], fired)
				}
				rep := alive[0].do(taskCommand{Op: "get", Owner: owners[id], ID: id})
				if rep.Task.Status != ports.TaskCompleted || rep.Task.Result == nil {
					t.Fatalf("fired timer = %+v", rep)
				}
			}
			if len(fired) != len(ids) {
				t.Fatalf("%d firings of %d timers", len(fired), len(ids))
			}
			for o := range 10 {
				rep := alive[len(alive)-1].do(taskCommand{Op: "list", Owner: fmt.Sprintf("owner-%d", o)})
				pending := 0
				for _, task := range rep.Tasks {
					if task.Status == ports.TaskWorking {
						pending++
					}
				}
				if pending != 1 {
					t.Fatalf("owner-%d has %d pending timers after the firing; want the one next occurrence: %+v", o, pending, rep.Tasks)
				}
			}
		})
	}
}

// The work of a SIGKILLed process is failed as interrupted by a survivor
// once its lease runs out, and the work of a process that still renews
// its lease is left running however long it takes.
func TestInterruptedWorkIsSettledOnlyForProcessesThatAreGone(t *testing.T) {
	dir := t.TempDir()
	doomed, alive := startTaskHelper(t, dir), startTaskHelper(t, dir)
	lost := doomed.do(taskCommand{Op: "start", Owner: "alice"})
	kept := alive.do(taskCommand{Op: "start", Owner: "alice"})
	if lost.Err != "" || kept.Err != "" {
		t.Fatal(lost.Err, kept.Err)
	}
	doomed.kill()
	r, _ := openTestTasks(t, dir, newStoppingWork().config())
	ctx := context.Background()
	waitFor(t, "the killed process's task failing", func() bool {
		got, err := r.Get(ctx, "alice", lost.Task.ID)
		return err == nil && got.Status == ports.TaskFailed && got.Error == ports.TaskInterrupted
	})
	time.Sleep(3 * testLease) // a non-event: the live process's task stays working
	if got, err := r.Get(ctx, "alice", kept.Task.ID); err != nil || got.Status != ports.TaskWorking {
		t.Fatalf("the live process's task = %+v, %v", got, err)
	}
	if ids := alive.do(taskCommand{Op: "stopped"}).IDs; len(ids) != 0 {
		t.Fatalf("the live process's work was stopped: %v", ids)
	}
}

// Tasks and timers share the store with another process's write burst
// (eight writers committing back to back) without an error reaching a
// caller, and the timers still fire.
func TestTasksBesideAnotherProcesssWriteBurst(t *testing.T) {
	dir := t.TempDir()
	burst := startHelper(t, dir)
	burst.send(command{Op: "burst", Owner: "alice", Key: "b"})
	acked, read := make(chan struct{}, 1), make(chan struct{})
	go func() {
		defer close(read)
		for {
			var r reply
			if err := burst.out.Decode(&r); err != nil {
				return
			}
			if r.Err != "" {
				t.Errorf("the burst's write failed: %s", r.Err)
				return
			}
			select {
			case acked <- struct{}{}:
			default:
			}
		}
	}()
	<-acked // the burst is under way
	// Killed mid-burst, as the other burst tests do, and its replies read
	// to the end before the test returns: no error is reported after it.
	defer func() {
		_ = burst.cmd.Process.Kill()
		<-read
	}()
	w := newStoppingWork()
	r, _ := openTestTasks(t, dir, w.config())
	ctx := context.Background()
	var timers []ports.Task
	for o := range 10 {
		p := ports.NewPrincipal(fmt.Sprintf("owner-%d", o), "tasks:write")
		for range tasktest.Limits.MaxTimersPerOwner {
			task, err := r.Schedule(ctx, ports.NewTimer{Principal: p, Payload: []byte(`{}`), DueAt: time.Now().Add(300 * time.Millisecond)})
			if err != nil {
				t.Fatalf("Schedule beside the burst: %v", err)
			}
			timers = append(timers, task)
		}
		task, err := r.Start(ctx, ports.NewTask{Kind: ports.TaskKindScan, Principal: p, Input: []byte(`{}`)})
		if err != nil {
			t.Fatalf("Start beside the burst: %v", err)
		}
		<-w.started
		if _, _, err := r.List(ctx, p.Subject, -1); err != nil {
			t.Fatalf("List beside the burst: %v", err)
		}
		if got, err := r.Cancel(ctx, p.Subject, task.ID); err != nil || got.Status != ports.TaskCancelled {
			t.Fatalf("Cancel beside the burst: %+v %v", got, err)
		}
	}
	for _, timer := range timers {
		waitFor(t, "a timer firing beside the burst", func() bool {
			got, err := r.Get(ctx, timer.Owner, timer.ID)
			if err != nil {
				t.Fatalf("Get beside the burst: %v", err)
			}
			return got.Status == ports.TaskCompleted
		})
	}
}
