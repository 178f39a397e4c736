package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

const planted = "AKIAIOSFODNN7EXAMPLE"

// structured is a result's structured content as a JSON object.
func structured(r *mcp.CallToolResult) map[string]any {
	sc, _ := r.StructuredContent.(map[string]any)
	return sc
}

// awaitTask polls task_get until the task leaves working.
func awaitTask(t *testing.T, c *client.Client, id any) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := call(t, c, "task_get", map[string]any{"task_id": id})
		if r.IsError {
			t.Fatalf("task_get: %s", text(r))
		}
		if sc := structured(r); sc["status"] != "working" {
			return sc
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %v never finished", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTaskToolsOverStdio drives the five tasks tools through the real
// binary on both legs: a background scan that reports redacted findings,
// a timer that fires with its payload, idempotent cancellation, refused
// handles, and nothing of the payload or the secret in the log.
func TestTaskToolsOverStdio(t *testing.T) {
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			c, stderr := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "docs"}, leg.opts...)
			for path, body := range map[string]string{"exports/keys.md": "deploy key " + planted + "\n", "exports/notes.txt": "nothing here\n", "other/x.md": planted + "\n"} {
				if r := call(t, c, "doc_write", map[string]any{"path": path, "content": body}); r.IsError {
					t.Fatalf("doc_write: %s", text(r))
				}
			}
			r := call(t, c, "scan_corpus_async", map[string]any{"path_prefix": "exports/"})
			scan := structured(r)
			if r.IsError || scan["status"] != "working" || len(scan["task_id"].(string)) != 32 {
				t.Fatalf("scan_corpus_async: %s", text(r))
			}
			done := awaitTask(t, c, scan["task_id"])
			res, _ := done["result"].(map[string]any)
			findings, _ := res["findings"].([]any)
			if done["status"] != "completed" || done["kind"] != "scan_corpus" || res["files_scanned"] != float64(2) || len(findings) != 1 {
				t.Fatalf("scan result: %#v", done)
			}
			if f := findings[0].(map[string]any); f["path"] != "exports/keys.md" || !strings.HasPrefix(f["placeholder"].(string), "[REDACTED:") {
				t.Fatalf("finding: %#v", f)
			}
			if r = call(t, c, "task_get", map[string]any{"task_id": scan["task_id"]}); strings.Contains(text(r), planted) {
				t.Fatal("the raw secret left the scan")
			}

			r = call(t, c, "task_schedule", map[string]any{"delay_seconds": 0, "payload": map[string]any{"note": "check build tangerine"}})
			timer := structured(r)
			if r.IsError || timer["status"] != "working" || timer["due_at"] == "" {
				t.Fatalf("task_schedule: %s", text(r))
			}
			fired := awaitTask(t, c, timer["task_id"])
			payload, _ := fired["result"].(map[string]any)["payload"].(map[string]any)
			if fired["status"] != "completed" || fired["kind"] != "timer" || payload["note"] != "check build tangerine" {
				t.Fatalf("fired timer: %#v", fired)
			}

			later := structured(call(t, c, "task_schedule", map[string]any{"delay_seconds": 3600, "repeat_seconds": 600}))
			for range 2 { // cancelling is idempotent
				r = call(t, c, "task_update", map[string]any{"task_id": later["task_id"], "action": "cancel"})
				if r.IsError || structured(r)["status"] != "cancelled" {
					t.Fatalf("task_update: %s", text(r))
				}
			}
			if r = call(t, c, "task_update", map[string]any{"task_id": scan["task_id"], "action": "cancel"}); r.IsError || structured(r)["status"] != "completed" {
				t.Fatalf("cancel of a finished scan: %s", text(r))
			}

			r = call(t, c, "task_list", map[string]any{})
			list, _ := structured(r)["tasks"].([]any)
			if r.IsError || len(list) != 3 || list[0].(map[string]any)["task_id"] != scan["task_id"] {
				t.Fatalf("task_list: %s", text(r))
			}
			if r = call(t, c, "task_get", map[string]any{"task_id": strings.Repeat("0", 32)}); !r.IsError || !strings.Contains(text(r), "not found") {
				t.Fatalf("missing id: %s", text(r))
			}
			for _, id := range []string{"../../etc/passwd", strings.Repeat("F", 32), "3f2a", scan["task_id"].(string) + "0"} {
				if r = call(t, c, "task_get", map[string]any{"task_id": id}); !r.IsError || strings.Contains(text(r), id) {
					t.Fatalf("id %q: %s", id, text(r))
				}
			}
			for _, args := range []map[string]any{{"delay_seconds": -1}, {"delay_seconds": 86401}, {"delay_seconds": 1, "repeat_seconds": 5},
				{"delay_seconds": 1, "payload": map[string]any{"blob": strings.Repeat("p", 16385)}}} {
				if r = call(t, c, "task_schedule", args); !r.IsError {
					t.Fatalf("task_schedule(%v) accepted", args)
				}
			}
			if log := stderr.String(); strings.Contains(log, "tangerine") || strings.Contains(log, planted) {
				t.Fatal("a payload or a secret reached the log")
			}
		})
	}
}

// TestTimersSurviveARestart schedules timers, stops the server before they
// are due, and starts it again on the same data directory: the one due
// meanwhile fires late, the other is still pending.
func TestTimersSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"ARROWHEAD_PROFILE": "docs"}
	c, _ := startStdioIn(t, dir, env)
	soon := structured(call(t, c, "task_schedule", map[string]any{"delay_seconds": 1, "payload": map[string]any{"n": 1}}))
	later := structured(call(t, c, "task_schedule", map[string]any{"delay_seconds": 3600}))
	if soon["task_id"] == nil || later["task_id"] == nil {
		t.Fatal("task_schedule failed")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	due, _ := time.Parse(time.RFC3339Nano, soon["due_at"].(string))
	time.Sleep(time.Until(due) + 200*time.Millisecond) // due while no server runs

	c, _ = startStdioIn(t, dir, env)
	fired := awaitTask(t, c, soon["task_id"])
	updated, _ := time.Parse(time.RFC3339Nano, fired["updated_at"].(string))
	if fired["status"] != "completed" || !updated.After(due) {
		t.Fatalf("the late timer: %#v", fired)
	}
	if r := call(t, c, "task_get", map[string]any{"task_id": later["task_id"]}); structured(r)["status"] != "working" || structured(r)["due_at"] != later["due_at"] {
		t.Fatalf("the pending timer: %s", text(r))
	}
}

// TestTaskOwnersIsolatedOverHTTP: two verified subjects on one server
// never see or cancel each other's tasks; a foreign handle reads exactly
// like a missing one.
func TestTaskOwnersIsolatedOverHTTP(t *testing.T) {
	s := startHTTP(t, map[string]string{"ARROWHEAD_PROFILE": "docs"})
	alice := s.connect(t, s.token(t, "alice", "docs:scan", "tasks:read", "tasks:write"))
	bob := s.connect(t, s.token(t, "bob", "docs:scan", "tasks:read", "tasks:write"))
	scan := structured(call(t, alice, "scan_corpus_async", map[string]any{}))
	timer := structured(call(t, alice, "task_schedule", map[string]any{"delay_seconds": 3600, "payload": map[string]any{"who": "alice"}}))
	if scan["task_id"] == nil || timer["task_id"] == nil {
		t.Fatal("alice could not start her tasks")
	}
	missing := call(t, bob, "task_get", map[string]any{"task_id": strings.Repeat("0", 32)})
	for _, id := range []any{scan["task_id"], timer["task_id"]} {
		foreign := call(t, bob, "task_get", map[string]any{"task_id": id})
		if !foreign.IsError || text(foreign) != text(missing) {
			t.Fatalf("foreign handle %q differs from missing %q", text(foreign), text(missing))
		}
		cancel := call(t, bob, "task_update", map[string]any{"task_id": id, "action": "cancel"})
		if !cancel.IsError || text(cancel) != text(missing) {
			t.Fatalf("bob's cancel: %q", text(cancel))
		}
	}
	if r := call(t, bob, "task_list", map[string]any{}); r.IsError || len(structured(r)["tasks"].([]any)) != 0 {
		t.Fatalf("bob lists: %s", text(r))
	}
	if got := awaitTask(t, alice, scan["task_id"]); got["status"] != "completed" {
		t.Fatalf("alice's scan: %#v", got)
	}
	if r := call(t, alice, "task_get", map[string]any{"task_id": timer["task_id"]}); structured(r)["status"] != "working" {
		t.Fatalf("bob's cancel reached alice's timer: %s", text(r))
	}
	if r := call(t, alice, "task_list", map[string]any{}); len(structured(r)["tasks"].([]any)) != 2 {
		t.Fatalf("alice lists: %s", text(r))
	}
	readOnly := s.connect(t, s.token(t, "carol", "tasks:read"))
	if r := call(t, readOnly, "task_schedule", map[string]any{"delay_seconds": 60}); !r.IsError {
		t.Fatal("tasks:read alone could schedule")
	}
}
