package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/arrowhead-go/arrowhead/internal/pgtest"
)

// TestReplicasRideOutAPostgresRestart: three replicas on one Redis and a
// private PostgreSQL 15 that the test stops for a few seconds and starts
// again, while a caller keeps writing through all three and scans and
// timers are in flight. During the outage every answer is a clean
// refusal (never "Internal error"); afterwards each replica serves again
// by itself, every scan ends settled, every timer fired exactly once and
// nothing is left working.
func TestReplicasRideOutAPostgresRestart(t *testing.T) {
	srv := pgtest.StartServer(t)
	dsn := srv.DSN()
	redisURL := startRedisForReplicas(t)
	state := map[string]string{"ARROWHEAD_STATE_DSN": dsn, "ARROWHEAD_MEMORY_DSN": dsn}
	migrate(t, state)
	corpus := t.TempDir()
	writeFile(t, corpus+"/small/runbook.md", "# Runbook\n\nRestart the worker.\n")
	writeFile(t, corpus+"/small/keys.md", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n")
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ARROWHEAD_REDIS_URL": redisURL, "ARROWHEAD_DOCS_ROOT": corpus,
		"ARROWHEAD_KV_SET_PER_MINUTE": "100000"}
	for k, v := range state {
		env[k] = v
	}
	servers := []*server{startHTTPWithKey(t, key, env), startHTTPWithKey(t, key, env), startHTTPWithKey(t, key, env)}
	token := servers[0].token(t, "alice@example.com", "memory:read", "memory:write", "docs:read", "docs:scan", "tasks:read", "tasks:write")
	var clients []*client.Client
	for _, s := range servers {
		clients = append(clients, s.connect(t, token))
	}

	// Timers due before, during and after the outage, scheduled on every
	// replica in turn.
	var timers []string
	for i := range 6 {
		r := call(t, clients[i%3], "task_schedule", map[string]any{"delay_seconds": 2 + i, "payload": map[string]any{"n": i}})
		if r.IsError {
			t.Fatalf("task_schedule: %s", text(r))
		}
		id, _ := structured(r)["task_id"].(string)
		timers = append(timers, id)
	}
	var scans []string
	for i := range 3 {
		scans = append(scans, startScan(t, clients[i], "small/"))
	}

	// Load: kv_set through the three replicas in turn, all along.
	var (
		mu       sync.Mutex
		ok, refs int
		bad      []string
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var req mcp.CallToolRequest
			req.Params.Name = "kv_set"
			req.Params.Arguments = map[string]any{"key": fmt.Sprintf("load.%d", i%50), "value": fmt.Sprint(i)}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			res, err := clients[i%3].CallTool(ctx, req)
			cancel()
			mu.Lock()
			switch {
			case err != nil:
				bad = append(bad, "transport: "+err.Error())
			case !res.IsError:
				ok++
			case strings.Contains(text(res), "Internal error"):
				bad = append(bad, text(res))
			default:
				refs++
			}
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()

	time.Sleep(time.Second)
	srv.Stop()
	time.Sleep(4 * time.Second)
	srv.Start()
	back := time.Now()

	// Each replica serves again by itself.
	for i, c := range clients {
		for {
			r := call(t, c, "kv_get", map[string]any{"key": "load.0"})
			if !r.IsError || strings.Contains(text(r), "not found") {
				break
			}
			if time.Since(back) > 15*time.Second {
				t.Fatalf("replica %d still refuses 15 s after PostgreSQL returned: %s", i, text(r))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("all three replicas served again %v after PostgreSQL returned", time.Since(back).Round(time.Millisecond))
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	mu.Lock()
	t.Logf("load: %d writes acknowledged, %d refused during the outage", ok, refs)
	if len(bad) > 0 {
		t.Fatalf("%d answers were not clean refusals, first: %s", len(bad), bad[0])
	}
	if refs == 0 {
		t.Fatal("no write was refused: the outage did not happen")
	}
	mu.Unlock()

	for _, id := range scans {
		if got := awaitTask(t, clients[1], id); got["status"] != "completed" {
			t.Fatalf("scan %s ended %v", id, got)
		}
	}
	for i, id := range timers {
		got := waitStatus(t, clients[2], id, "completed")
		if !strings.Contains(fmt.Sprint(got["result"]), fmt.Sprintf("n:%d", i)) {
			t.Fatalf("timer %d fired with %v", i, got)
		}
	}
	// The database itself, the independent witness: nothing working, and
	// each timer's job completed once.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var working int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM arrowhead_tasks WHERE status = 'working'`).Scan(&working); err != nil || working != 0 {
		t.Fatalf("%d tasks still working (%v)", working, err)
	}
	var fired int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'arrowhead_timer' AND state = 'completed' AND args->>'task_id' = ANY($1)`, timers).Scan(&fired); err != nil || fired != len(timers) {
		var states []string
		rows, _ := conn.Query(ctx, `SELECT state::text || ' attempt ' || attempt || ' ' || coalesce(errors::text, '') FROM river_job WHERE kind = 'arrowhead_timer' AND args->>'task_id' = ANY($1)`, timers)
		for rows.Next() {
			var st string
			_ = rows.Scan(&st)
			states = append(states, st)
		}
		rows.Close()
		t.Fatalf("%d timer jobs completed for %d timers (%v); jobs: %q", fired, len(timers), err, states)
	}
}
