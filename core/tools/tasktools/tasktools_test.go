package tasktools_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/adapters/fs"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/tools/docs"
	"github.com/arrowhead-go/arrowhead/core/tools/tasktools"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

const awsKey = "AKIAIOSFODNN7EXAMPLE"

var (
	alice = ports.NewPrincipal("alice", "docs:scan", "tasks:read", "tasks:write")
	bob   = ports.NewPrincipal("bob", "docs:scan", "tasks:read", "tasks:write")
)

// gatedStore is the real corpus with every Read waiting for a release, so
// a test can cancel a scan in the middle and count what it read after.
type gatedStore struct {
	ports.DocumentStore
	reads   atomic.Int32
	arrived chan struct{}
	release chan struct{}
}

func (g *gatedStore) Read(ctx context.Context, rel string, max int64) ([]byte, ports.FileInfo, error) {
	g.reads.Add(1)
	g.arrived <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ports.FileInfo{}, ctx.Err()
	}
	return g.DocumentStore.Read(ctx, rel, max)
}

type env struct {
	app   *core.App
	tasks *boltstores.TaskRegistry
	gate  *gatedStore
	// returned receives once per scan whose work has returned.
	returned chan struct{}
}

// newEnv serves the tasks family over the embedded registry and a real
// corpus of files, as wire does; policy "" is the default policy.
func newEnv(t testing.TB, policy string, gated bool, vars map[string]string, files map[string]string) env {
	t.Helper()
	root := t.TempDir()
	coretest.WriteFiles(t, root, files)
	all := map[string]string{"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_RATE_LIMIT_ENABLED": "false"}
	for k, v := range vars {
		all[k] = v
	}
	s := coretest.Settings(t, all)
	corpus, err := fs.OpenDocuments(fs.DocumentsConfig{Root: root, Extensions: s.DocAllowedExtensions, MaxReadBytes: int64(s.DocMaxBytes)})
	if err != nil {
		t.Fatal(err)
	}
	var store ports.DocumentStore = corpus
	var gate *gatedStore
	if gated {
		gate = &gatedStore{DocumentStore: corpus, arrived: make(chan struct{}, 100), release: make(chan struct{}, 100)}
		store = gate
	}
	if policy == "" {
		policy = `{"grants":[{"subject":"*","actions":["scan"],"kinds":["document"],"prefix":""}]}`
	}
	pol, err := authz.Parse([]byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(bolt.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := db.Namespace(boltstores.TasksNamespace)
	if err != nil {
		t.Fatal(err)
	}
	docsConfig, err := docs.Family.Config(s)
	if err != nil {
		t.Fatal(err)
	}
	taskConfig, err := tasktools.Family.Config(s)
	if err != nil {
		t.Fatal(err)
	}
	scanner := docs.NewScanner(docsConfig, store, pol, security.NewScanner([]byte("0123456789abcdef0123456789abcdef")))
	workers := tasktools.Workers(scanner)
	scan, returned := workers[ports.TaskKindScan], make(chan struct{}, 100)
	workers[ports.TaskKindScan] = func(ctx context.Context, run ports.TaskRun) ([]byte, error) {
		defer func() { returned <- struct{}{} }()
		return scan(ctx, run)
	}
	reg, err := boltstores.OpenTaskRegistry(t.Context(), ns, ports.TaskConfig{Limits: taskConfig.Limits(), Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if gate != nil {
			close(gate.release)
		}
		_ = reg.Close(context.Background())
		_ = db.Close()
	})
	app, err := core.New(core.Deps{Settings: s, Authorizer: pol, Rates: &portstest.Counter{}, Audit: &portstest.Audit{},
		Tracer: nop.Tracer{}, Metrics: nop.Metrics{}, Clock: ports.SystemClock{},
		Families: []core.Member{tasktools.Family.With(tasktools.Ports{Tasks: reg, Clock: ports.SystemClock{}})}})
	if err != nil {
		t.Fatal(err)
	}
	return env{app: app, tasks: reg, gate: gate, returned: returned}
}

func (e env) call(t testing.TB, p ports.Principal, tool string, args map[string]any) (map[string]any, string, *catalog.ToolError) {
	t.Helper()
	res, te := coretest.Call(t, e.app, p, tool, args)
	if te != nil {
		return nil, "", te
	}
	return res.Structured(), res.Text, nil
}

func (e env) must(t testing.TB, p ports.Principal, tool string, args map[string]any) map[string]any {
	t.Helper()
	out, _, te := e.call(t, p, tool, args)
	if te != nil {
		t.Fatalf("%s: %s", tool, te.Message)
	}
	return out
}

// await polls task_get until the task leaves working.
func (e env) await(t testing.TB, p ports.Principal, id any) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := e.must(t, p, "task_get", map[string]any{"task_id": id})
		if out["status"] != "working" {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %v never finished", id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestScanRunsInTheBackgroundAndReportsRedactedFindings(t *testing.T) {
	e := newEnv(t, `{"grants":[{"subject":"*","actions":["scan"],"kinds":["document"],"prefix":"public/"}]}`, false, nil, map[string]string{
		"public/a.md":  "deploy key " + awsKey + "\n",
		"public/b.txt": "nothing here\n",
		"private/c.md": "also " + awsKey + "\n",
	})
	start := e.must(t, alice, "scan_corpus_async", map[string]any{})
	if start["status"] != "working" || len(start["task_id"].(string)) != ports.TaskIDLength {
		t.Fatalf("start = %v", start)
	}
	done := e.await(t, alice, start["task_id"])
	res, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || done["kind"] != "scan_corpus" || res == nil {
		t.Fatalf("done = %v", done)
	}
	// The scan ran as alice, authorized at start: the file outside her
	// grant was skipped, not scanned.
	if res["files_scanned"] != float64(2) || res["files_skipped"] != float64(1) {
		t.Fatalf("scanned %v skipped %v", res["files_scanned"], res["files_skipped"])
	}
	if tr, ok := res["truncated"].([]any); !ok || len(tr) != 0 {
		t.Fatalf("a whole scan's truncated = %#v, want []", res["truncated"])
	}
	findings, _ := res["findings"].([]any)
	if len(findings) != 1 || findings[0].(map[string]any)["path"] != "public/a.md" {
		t.Fatalf("findings = %v", findings)
	}
	_, text, _ := e.call(t, alice, "task_get", map[string]any{"task_id": start["task_id"]})
	raw, _ := json.Marshal(done)
	if strings.Contains(string(raw), awsKey) || strings.Contains(text, awsKey) {
		t.Fatal("a raw secret left the scan")
	}
	// A prefix narrows the scan; a traversal is refused at start.
	start = e.must(t, alice, "scan_corpus_async", map[string]any{"path_prefix": "public/b"})
	if res := e.await(t, alice, start["task_id"])["result"].(map[string]any); res["files_scanned"] != float64(0) {
		t.Fatalf("prefix scan = %v", res)
	}
	for _, bad := range []string{"../", "/etc/", "public/../../x", "a\x00b"} {
		if _, _, te := e.call(t, alice, "scan_corpus_async", map[string]any{"path_prefix": bad}); te == nil || strings.Contains(te.Message, bad) {
			t.Fatalf("prefix %q: %v", bad, te)
		}
	}
}

func TestCancelStopsTheScanBetweenFiles(t *testing.T) {
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		files[n+".md"] = "text " + n + "\n"
	}
	e := newEnv(t, "", true, nil, files)
	id := e.must(t, alice, "scan_corpus_async", map[string]any{})["task_id"]
	<-e.gate.arrived // the scan is reading its first file
	out := e.must(t, alice, "task_update", map[string]any{"task_id": id, "action": "cancel"})
	if out["status"] != "cancelled" {
		t.Fatalf("cancel = %v", out)
	}
	// Let every read through: the scan checks before the next file and
	// stops, so it reads no second one.
	for range len(files) {
		e.gate.release <- struct{}{}
	}
	select {
	case <-e.returned:
	case <-time.After(20 * time.Second):
		t.Fatalf("the cancelled scan never returned (%d reads)", e.gate.reads.Load())
	}
	if n := e.gate.reads.Load(); n != 1 {
		t.Fatalf("the cancelled scan read %d files", n)
	}
	again := e.must(t, alice, "task_update", map[string]any{"task_id": id, "action": "cancel"})
	if again["status"] != "cancelled" {
		t.Fatalf("second cancel = %v", again)
	}
	if got := e.must(t, alice, "task_get", map[string]any{"task_id": id}); got["status"] != "cancelled" || got["result"] != nil {
		t.Fatalf("task_get after cancel = %v", got)
	}
}

func TestOwnersAreIsolatedAndForeignIDsAreMissing(t *testing.T) {
	e := newEnv(t, "", false, nil, map[string]string{"a.md": "x\n"})
	id := e.must(t, alice, "scan_corpus_async", map[string]any{})["task_id"].(string)
	timer := e.must(t, alice, "task_schedule", map[string]any{"delay_seconds": 3600})["task_id"].(string)
	_, _, missing := e.call(t, bob, "task_get", map[string]any{"task_id": ports.NewTaskID()})
	if missing == nil || missing.Kind != catalog.KindNotFound {
		t.Fatalf("missing = %v", missing)
	}
	for _, foreign := range []string{id, timer} {
		for tool, args := range map[string]map[string]any{
			"task_get":    {"task_id": foreign},
			"task_update": {"task_id": foreign, "action": "cancel"},
		} {
			_, _, te := e.call(t, bob, tool, args)
			if te == nil || te.Kind != missing.Kind || te.Message != missing.Message {
				t.Fatalf("bob %s(alice's) = %v, want exactly %v", tool, te, missing)
			}
		}
	}
	if list := e.must(t, bob, "task_list", map[string]any{}); len(list["tasks"].([]any)) != 0 {
		t.Fatalf("bob lists %v", list)
	}
	list := e.must(t, alice, "task_list", map[string]any{})["tasks"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["task_id"] != id || list[1].(map[string]any)["kind"] != "timer" {
		t.Fatalf("alice lists %v", list)
	}
	if got := e.must(t, alice, "task_get", map[string]any{"task_id": timer}); got["status"] != "working" {
		t.Fatalf("bob's cancel reached alice's timer: %v", got)
	}
}

func TestMalformedIDsAreRefusedWithoutEcho(t *testing.T) {
	e := newEnv(t, "", false, nil, nil)
	for _, id := range []any{"", "../../etc/passwd", strings.Repeat("A", 32), strings.Repeat("a", 31), strings.Repeat("a", 33),
		"3f2a" + strings.Repeat("0", 27) + "\u0430", "3f2a%2e%2e" + strings.Repeat("0", 22), 42, nil, []any{"x"}} {
		for tool, args := range map[string]map[string]any{
			"task_get":    {"task_id": id},
			"task_update": {"task_id": id, "action": "cancel"},
		} {
			_, _, te := e.call(t, alice, tool, args)
			if te == nil || te.Kind != catalog.KindValidation && te.Kind != catalog.KindNotFound {
				t.Fatalf("%s(%v) succeeded", tool, id)
			}
			if s, ok := id.(string); ok && len(s) > 3 && strings.Contains(te.Message, s) {
				t.Fatalf("%s echoed the id: %s", tool, te.Message)
			}
		}
	}
	for _, action := range []any{"delete", "CANCEL", "", nil} {
		if _, _, te := e.call(t, alice, "task_update", map[string]any{"task_id": ports.NewTaskID(), "action": action}); te == nil || te.Kind != catalog.KindValidation {
			t.Fatalf("action %v: %v", action, te)
		}
	}
}

func TestScheduleBoundsAndFiring(t *testing.T) {
	e := newEnv(t, "", false, map[string]string{"ARROWHEAD_TASK_SCHEDULE_MAX_PER_OWNER": "2", "ARROWHEAD_TASK_PAYLOAD_MAX_BYTES": "64",
		"ARROWHEAD_TASK_SCHEDULE_MAX_DELAY_SECONDS": "100.5", "ARROWHEAD_TASK_SCHEDULE_MIN_REPEAT_SECONDS": "60"}, nil)
	invalid := []map[string]any{
		{"delay_seconds": -1},
		{"delay_seconds": 100.6},
		{"delay_seconds": 1e300},
		{"delay_seconds": "10"},
		{},
		{"delay_seconds": 1, "repeat_seconds": 59.9},
		{"delay_seconds": 1, "repeat_seconds": 0},
		{"delay_seconds": 1, "repeat_seconds": -60},
		{"delay_seconds": 1, "repeat_seconds": 1e9},
		{"delay_seconds": 1, "payload": map[string]any{"big": strings.Repeat("x", 64)}},
		{"delay_seconds": 1, "payload": "not an object"},
		{"delay_seconds": 1, "payload": []any{1, 2}},
		{"delay_seconds": 1, "payload": nested(200)},
		{"delay_seconds": 1, "extra": true},
	}
	for _, args := range invalid {
		if _, _, te := e.call(t, alice, "task_schedule", args); te == nil || te.Kind != catalog.KindValidation {
			t.Fatalf("task_schedule(%v) = %v", args, te)
		}
	}
	if l, _, _ := e.tasks.List(t.Context(), "alice", 10); len(l) != 0 {
		t.Fatalf("a refused schedule was recorded: %+v", l)
	}
	// A timer due now fires with its payload, sanitized.
	id := e.must(t, alice, "task_schedule", map[string]any{"delay_seconds": 0, "payload": map[string]any{"note": "check\u202e build"}})["task_id"]
	fired := e.await(t, alice, id)
	payload, _ := fired["result"].(map[string]any)["payload"].(map[string]any)
	if fired["status"] != "completed" || fired["kind"] != "timer" || payload["note"] != "check build" {
		t.Fatalf("fired = %v", fired)
	}
	// Pending timers are capped per owner; fired ones do not count.
	for range 2 {
		e.must(t, alice, "task_schedule", map[string]any{"delay_seconds": 100, "repeat_seconds": 60})
	}
	_, _, te := e.call(t, alice, "task_schedule", map[string]any{"delay_seconds": 100})
	if te == nil || !strings.Contains(te.Message, "ARROWHEAD_TASK_SCHEDULE_MAX_PER_OWNER") {
		t.Fatalf("third pending timer = %v", te)
	}
	e.must(t, bob, "task_schedule", map[string]any{"delay_seconds": 100})
}

func TestRepeatingTimerNamesItsNextOccurrence(t *testing.T) {
	e := newEnv(t, "", false, map[string]string{"ARROWHEAD_TASK_SCHEDULE_MIN_REPEAT_SECONDS": "60"}, nil)
	id := e.must(t, alice, "task_schedule", map[string]any{"delay_seconds": 0, "repeat_seconds": 60, "payload": map[string]any{"n": 1}})["task_id"]
	fired := e.await(t, alice, id)
	next, _ := fired["result"].(map[string]any)["next_task_id"].(string)
	if len(next) != ports.TaskIDLength {
		t.Fatalf("fired = %v", fired)
	}
	pending := e.must(t, alice, "task_get", map[string]any{"task_id": next})
	due, err := time.Parse(time.RFC3339Nano, pending["due_at"].(string))
	if err != nil || pending["status"] != "working" || time.Until(due) < 50*time.Second {
		t.Fatalf("next occurrence = %v", pending)
	}
	if out := e.must(t, alice, "task_update", map[string]any{"task_id": next, "action": "cancel"}); out["status"] != "cancelled" {
		t.Fatalf("cancel = %v", out)
	}
	// Cancelling the fired occurrence changes nothing.
	_, text, _ := e.call(t, alice, "task_update", map[string]any{"task_id": id, "action": "cancel"})
	if !strings.Contains(text, "already finished") {
		t.Fatalf("cancel of a fired timer said %q", text)
	}
}

func TestRunningTasksAreBoundedPerOwner(t *testing.T) {
	e := newEnv(t, "", true, nil, map[string]string{"a.md": "x\n"})
	var ids []any
	for range tasktools.MaxRunningPerOwner {
		ids = append(ids, e.must(t, alice, "scan_corpus_async", map[string]any{})["task_id"])
	}
	_, _, te := e.call(t, alice, "scan_corpus_async", map[string]any{})
	if te == nil || te.Kind != catalog.KindValidation {
		t.Fatalf("one scan too many = %v", te)
	}
	e.must(t, bob, "scan_corpus_async", map[string]any{})
	e.must(t, alice, "task_update", map[string]any{"task_id": ids[0], "action": "cancel"})
	e.must(t, alice, "scan_corpus_async", map[string]any{})
}

func TestResultIsBounded(t *testing.T) {
	var out docs.ScanOutput
	for range 20000 {
		out.Findings = append(out.Findings, docs.ScanFinding{Type: "aws_access_key", Path: strings.Repeat("p", 40), Line: 1, Column: 1,
			Placeholder: "[REDACTED:AWS_ACCESS_KEY:0123456789ab]"})
	}
	raw, err := tasktools.BoundedResult(out)
	if err != nil || len(raw) > tasktools.MaxResultBytes {
		t.Fatalf("%d bytes, %v", len(raw), err)
	}
	var got docs.ScanOutput
	if err := json.Unmarshal(raw, &got); err != nil || len(got.Findings) == 0 || len(got.Findings) >= 20000 ||
		len(got.Truncated) != 1 || got.Truncated[0] != "result" {
		t.Fatalf("bounded = %d findings, truncated %v, %v", len(got.Findings), got.Truncated, err)
	}
}

func nested(depth int) map[string]any {
	m := map[string]any{}
	cur := m
	for range depth {
		next := map[string]any{}
		cur["a"] = next
		cur = next
	}
	return m
}
