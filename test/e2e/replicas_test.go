package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/client"
	goredis "github.com/redis/go-redis/v9"

	"github.com/arrowhead-go/arrowhead/internal/pgtest"
)

// replicaWait bounds every wait for something another replica does: a
// scan finishing, a cancellation reaching the work, a timer firing after
// its replica died (River hands leadership, and with it the scheduler, to
// a survivor within its election interval).
const replicaWait = 60 * time.Second

// TestReplicasBehaveAsOne runs three server processes on one Redis and one
// PostgreSQL 15, as three replicas behind a load balancer, and talks to
// them in turn through mcp-go's client with one caller's token: what one
// replica was told, the others know.
func TestReplicasBehaveAsOne(t *testing.T) {
	dsn := pgtest.PrivateSchema(t, pgtest.PostgresDSN(t))
	redisURL := startRedisForReplicas(t)
	// One database for both, as the deployment notes allow.
	state := map[string]string{"ARROWHEAD_STATE_DSN": dsn, "ARROWHEAD_MEMORY_DSN": dsn}
	migrate(t, state)

	// The corpus is one directory every replica mounts (the deployment
	// notes' shared volume).
	corpus := t.TempDir()
	writeCorpus(t, corpus)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"ARROWHEAD_REDIS_URL":      redisURL,
		"ARROWHEAD_DOCS_ROOT":      corpus,
		"ARROWHEAD_SCAN_MAX_FILES": strconv.Itoa(bigFiles + 10),
	}
	for k, v := range state {
		env[k] = v
	}
	a, b, c := startHTTPWithKey(t, key, env), startHTTPWithKey(t, key, env), startHTTPWithKey(t, key, env)
	token := a.token(t, "alice@example.com", "memory:read", "memory:write", "context:read", "context:write",
		"docs:read", "docs:scan", "tasks:read", "tasks:write")
	ca, cb, cc := a.connect(t, token), b.connect(t, token), c.connect(t, token)

	t.Run("kv and memories written on one are read on another", func(t *testing.T) {
		if r := call(t, ca, "kv_set", map[string]any{"key": "deploy.step", "value": "canary at 10%"}); r.IsError {
			t.Fatalf("kv_set on A: %s", text(r))
		}
		if r := call(t, cb, "kv_get", map[string]any{"key": "deploy.step"}); r.IsError || !strings.Contains(text(r), "canary at 10%") {
			t.Fatalf("kv_get on B: %s", text(r))
		}
		r := call(t, cb, "memory_store", map[string]any{"namespace": "ops", "content": "the payments queue drains at night"})
		if r.IsError {
			t.Fatalf("memory_store on B: %s", text(r))
		}
		id, _ := structured(r)["id"].(string)
		if r := call(t, cc, "memory_list", map[string]any{"namespace": "ops"}); r.IsError || id == "" || !strings.Contains(text(r), id) {
			t.Fatalf("memory_list on C (id %q): %s", id, text(r))
		}
		if r := call(t, ca, "memory_search", map[string]any{"namespace": "ops", "query": "payments queue"}); r.IsError || !strings.Contains(text(r), "drains at night") {
			t.Fatalf("memory_search on A: %s", text(r))
		}
	})

	t.Run("a working set pinned on one is read on another", func(t *testing.T) {
		r := call(t, ca, "workingset_update", map[string]any{"name": "incident", "action": "pin",
			"items": []any{map[string]any{"kind": "doc", "identifier": "small/runbook.md", "note": "start here"}}})
		if r.IsError {
			t.Fatalf("pin on A: %s", text(r))
		}
		r = call(t, cb, "workingset_get", map[string]any{"name": "incident"})
		if got := text(r); r.IsError || !strings.Contains(got, "small/runbook.md") || !strings.Contains(got, "start here") {
			t.Fatalf("workingset_get on B: %s", got)
		}
	})

	t.Run("a scan started on one completes as seen from another and is listed on a third", func(t *testing.T) {
		id := startScan(t, ca, "small/")
		done := waitStatus(t, cb, id, "completed")
		res, _ := done["result"].(map[string]any)
		if res == nil || !strings.Contains(fmt.Sprint(res), "small/keys.md") {
			t.Fatalf("the scan's result on B: %v", done)
		}
		r := call(t, cc, "task_list", map[string]any{})
		if got := text(r); r.IsError || !strings.Contains(got, id) {
			t.Fatalf("task_list on C: %s", got)
		}
	})

	t.Run("a task cancelled on one is cancelled on another and its work stops", func(t *testing.T) {
		id := startScan(t, ca, "big/")
		job := riverJob(t, dsn, id)
		job.waitFor(t, "running")
		r := call(t, cc, "task_update", map[string]any{"task_id": id, "action": "cancel"})
		if got := text(r); r.IsError || !strings.Contains(got, "cancelled") {
			t.Fatalf("cancel on C: %s", got)
		}
		if got := structured(call(t, cb, "task_get", map[string]any{"task_id": id})); got["status"] != "cancelled" {
			t.Fatalf("task_get on B after the cancel: %v", got)
		}
		// The worker returned, wherever it ran, long before a scan of
		// the whole corpus could have finished; and nothing overwrote
		// the cancellation. River finishes the job completed when the
		// work saw the cancellation and returned, or cancelled when its
		// relayed cancellation reached the worker while it was still
		// claiming the task (the work then never ran).
		ran := job.waitFor(t, "completed", "cancelled")
		if ran > bigScanAtLeast/2 {
			t.Fatalf("the cancelled scan's work ran for %v", ran)
		}
		if got := structured(call(t, cb, "task_get", map[string]any{"task_id": id})); got["status"] != "cancelled" || got["result"] != nil {
			t.Fatalf("task_get on B after the work stopped: %v", got)
		}
	})

	t.Run("a timer scheduled on one fires after that one is killed", func(t *testing.T) {
		r := call(t, ca, "task_schedule", map[string]any{"delay_seconds": 7, "payload": map[string]any{"note": "page the on-call"}})
		if r.IsError {
			t.Fatalf("task_schedule on A: %s", text(r))
		}
		id, _ := structured(r)["task_id"].(string)
		if err := a.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		fired := waitStatus(t, cb, id, "completed")
		if !strings.Contains(fmt.Sprint(fired["result"]), "page the on-call") {
			t.Fatalf("the fired timer on B: %v", fired)
		}
	})
}

// Corpus shape: small/ scans at once; big/ holds enough text that a scan
// of it takes far longer than a cancellation needs to stop one: bigFiles
// hard links to one file just under ARROWHEAD_SCAN_PER_FILE_MAX_BYTES, so
// the scanner reads and matches it bigFiles times while the disk holds it
// once.
const (
	bigFiles    = 2000
	bigFileSize = 900_000
	// bigScanAtLeast is a conservative lower bound on a full scan of big/
	// (measured at about 25 s on a 2-core machine).
	bigScanAtLeast = 10 * time.Second
)

func writeCorpus(t *testing.T, root string) {
	t.Helper()
	files := map[string]string{
		"small/runbook.md": "# Runbook\n\nRestart the worker, then check the queue.\n",
		"small/keys.md":    "# Keys\n\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n",
		"small/notes.txt":  "nothing to see here\n",
	}
	for name, body := range files {
		writeFile(t, filepath.Join(root, name), body)
	}
	line := strings.Repeat("the quick brown fox jumps over the lazy dog 0123456789 ", 16) + "\n"
	first := filepath.Join(root, "big", "part-0000.txt")
	writeFile(t, first, strings.Repeat(line, bigFileSize/len(line)))
	for i := 1; i < bigFiles; i++ {
		if err := os.Link(first, filepath.Join(root, "big", fmt.Sprintf("part-%04d.txt", i))); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func startScan(t *testing.T, c *client.Client, prefix string) string {
	t.Helper()
	r := call(t, c, "scan_corpus_async", map[string]any{"path_prefix": prefix})
	if r.IsError {
		t.Fatalf("scan_corpus_async: %s", text(r))
	}
	id, _ := structured(r)["task_id"].(string)
	if id == "" {
		t.Fatalf("scan_corpus_async: no task_id in %s", text(r))
	}
	return id
}

// waitTask polls task_get on c until the task has status.
func waitStatus(t *testing.T, c *client.Client, id, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(replicaWait)
	for {
		got := structured(call(t, c, "task_get", map[string]any{"task_id": id}))
		if got["status"] == status {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s never became %s: %v", id, status, got)
		}
		// Within ARROWHEAD_TASK_GET_PER_MINUTE's default 120, which
		// Redis shares across the replicas.
		time.Sleep(500 * time.Millisecond)
	}
}

// jobWatch reads the River job that runs a task, straight from the
// database: the independent witness of where the work is.
type jobWatch struct {
	dsn, taskID string
}

func riverJob(t *testing.T, dsn, taskID string) jobWatch {
	t.Helper()
	return jobWatch{dsn: dsn, taskID: taskID}
}

// waitFor waits until the job is in one of states and returns how long it
// has run (attempted_at to finalized_at, or to now while running).
func (j jobWatch) waitFor(t *testing.T, states ...string) time.Duration {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, j.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(replicaWait)
	for {
		var got string
		var ran time.Duration
		err := conn.QueryRow(ctx, `SELECT state::text, coalesce(coalesce(finalized_at, now()) - attempted_at, interval '0')
FROM river_job WHERE args->>'task_id' = $1`, j.taskID).Scan(&got, &ran)
		if err == nil && slices.Contains(states, got) {
			return ran
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task's job never reached %s: %q, %v", strings.Join(states, " or "), got, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startRedisForReplicas starts a private redis-server on loopback, stopped
// when the test ends; it skips (fails under ARROWHEAD_REQUIRE_INTEGRATION=1)
// without redis-server on PATH.
func startRedisForReplicas(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(pgtest.RequireEnv) == "1" {
			t.Fatalf("INTEGRATION REQUIRED (%s=1) but unavailable: redis-server is not on PATH", pgtest.RequireEnv)
		}
		t.Skipf("\n*** SKIPPING REPLICAS TEST %s: redis-server is not on PATH (Debian package redis-server)\n*** Set %s=1 to make this a failure.", t.Name(), pgtest.RequireEnv)
	}
	port := freePort(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "redis://127.0.0.1:" + strconv.Itoa(port)
	opts, _ := goredis.ParseURL(url)
	rc := goredis.NewClient(opts)
	defer rc.Close()
	deadline := time.Now().Add(15 * time.Second)
	for rc.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer PING")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return url
}
