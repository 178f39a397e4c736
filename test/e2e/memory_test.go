package e2e

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/arrowhead-go/arrowhead/internal/pgtest"
)

// memoryBackends are the backends every memory scenario runs on: the
// embedded store (the default), and PostgreSQL 15 without pgvector
// through ARROWHEAD_MEMORY_DSN, in a private schema that the binary's own
// `arrowhead migrate` prepared. env returns the variables a fresh, empty
// backend needs.
var memoryBackends = []struct {
	name string
	env  func(t *testing.T) map[string]string
}{
	{"embedded", func(*testing.T) map[string]string { return map[string]string{"ARROWHEAD_PROFILE": "docs"} }},
	{"postgres", func(t *testing.T) map[string]string {
		env := map[string]string{"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_MEMORY_DSN": pgtest.PrivateSchema(t, pgtest.PostgresDSN(t))}
		migrate(t, env)
		return env
	}},
}

// migrate runs `arrowhead migrate` with env and checks that it applied the
// keyword memory tables.
func migrate(t *testing.T, env map[string]string) {
	t.Helper()
	cmd := exec.Command(binary, "migrate")
	cmd.Env = baseEnv(t, t.TempDir(), env)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "applied 002_memory\n") {
		t.Fatalf("arrowhead migrate: %v\n%s", err, out)
	}
}

// TestMemoryToolsOverStdio drives the seven memory tools through the real
// binary on both legs and every backend: dedup, update in place, keyword
// recall labelled as such, framed reads, kv with TTL, refused names, and
// nothing of the content in the log.
func TestMemoryToolsOverStdio(t *testing.T) {
	for _, backend := range memoryBackends {
		t.Run(backend.name, func(t *testing.T) {
			for _, leg := range legs {
				t.Run(leg.name, func(t *testing.T) { memoryToolsScenario(t, backend.env(t), leg.opts...) })
			}
		})
	}
}

func memoryToolsScenario(t *testing.T, env map[string]string, opts ...client.ClientOption) {
	const secretish = "the launch code is tangerine-42"
	c, stderr := startStdio(t, env, opts...)
	r := call(t, c, "memory_store", map[string]any{"namespace": "prefs", "content": secretish, "metadata": map[string]any{"from": "chat"}})
	sc, _ := r.StructuredContent.(map[string]any)
	id, _ := sc["id"].(string)
	if r.IsError || len(id) != 32 || sc["created"] != true {
		t.Fatalf("memory_store: %s %#v", text(r), sc)
	}
	if prov, _ := sc["provenance"].(map[string]any); prov["tool"] != "memory_store" || prov["caller"] == "" {
		t.Fatalf("provenance: %#v", sc["provenance"])
	}
	r = call(t, c, "memory_store", map[string]any{"namespace": "prefs", "content": secretish})
	if sc, _ := r.StructuredContent.(map[string]any); r.IsError || sc["id"] != id || sc["created"] != false {
		t.Fatalf("dedup: %s", text(r))
	}
	r = call(t, c, "memory_store", map[string]any{"namespace": "prefs", "content": "prefers metric units", "id": id})
	if sc, _ := r.StructuredContent.(map[string]any); r.IsError || sc["id"] != id {
		t.Fatalf("update in place: %s", text(r))
	}
	r = call(t, c, "memory_search", map[string]any{"namespace": "prefs", "query": "metric", "k": 3})
	sc, _ = r.StructuredContent.(map[string]any)
	results, _ := sc["results"].([]any)
	if r.IsError || sc["recall"] != "keyword" || len(results) != 1 {
		t.Fatalf("memory_search: %s", text(r))
	}
	first, _ := results[0].(map[string]any)
	if first["untrusted"] != true || !strings.Contains(first["content"].(string), "prefers metric units") || strings.Contains(text(r), "tangerine") {
		t.Fatalf("search result not framed or stale: %#v", first)
	}
	r = call(t, c, "memory_list", map[string]any{"namespace": "prefs"})
	sc, _ = r.StructuredContent.(map[string]any)
	if mems, _ := sc["memories"].([]any); r.IsError || len(mems) != 1 || sc["truncated"] != false {
		t.Fatalf("memory_list: %s", text(r))
	}
	r = call(t, c, "kv_set", map[string]any{"key": "draft.step", "value": "step 2 of 5", "ttl_seconds": 600})
	if r.IsError {
		t.Fatalf("kv_set: %s", text(r))
	}
	r = call(t, c, "kv_get", map[string]any{"key": "draft.step"})
	if got := text(r); r.IsError || !strings.Contains(got, "step 2 of 5") {
		t.Fatalf("kv_get: %s", got)
	}
	if r = call(t, c, "kv_delete", map[string]any{"key": "draft.step"}); r.IsError {
		t.Fatalf("kv_delete: %s", text(r))
	}
	if r = call(t, c, "kv_get", map[string]any{"key": "draft.step"}); !r.IsError || !strings.Contains(text(r), "not found") {
		t.Fatalf("kv_get after delete: %s", text(r))
	}
	if r = call(t, c, "memory_delete", map[string]any{"namespace": "prefs", "id": id}); r.IsError {
		t.Fatalf("memory_delete: %s", text(r))
	}
	if r = call(t, c, "memory_delete", map[string]any{"namespace": "prefs", "id": id}); !r.IsError || !strings.Contains(text(r), "not found") {
		t.Fatalf("second memory_delete: %s", text(r))
	}
	for _, ns := range []string{"../etc", "a/b", ".hidden", "pr\u0435fs", "a\u202eb", "", strings.Repeat("n", 65)} {
		r = call(t, c, "memory_list", map[string]any{"namespace": ns})
		if !r.IsError || (ns != "" && strings.Contains(text(r), ns)) {
			t.Fatalf("namespace %q accepted: %s", ns, text(r))
		}
	}
	for _, key := range []string{"../k", "k/v", "k\x00", "k v"} {
		if r = call(t, c, "kv_set", map[string]any{"key": key, "value": "v"}); !r.IsError {
			t.Fatalf("key %q accepted", key)
		}
	}
	if r = call(t, c, "memory_delete", map[string]any{"namespace": "prefs", "id": "../../x"}); !r.IsError {
		t.Fatal("traversal-shaped id accepted")
	}
	if r = call(t, c, "memory_store", map[string]any{"namespace": "prefs", "content": strings.Repeat("x", 100001)}); !r.IsError || !strings.Contains(text(r), "ARROWHEAD_MEMORY_MAX_CONTENT_BYTES") {
		t.Fatalf("oversized content: %s", text(r))
	}
	big := map[string]any{"blob": strings.Repeat("m", 5000)}
	if r = call(t, c, "memory_store", map[string]any{"namespace": "prefs", "content": "x", "metadata": big}); !r.IsError || !strings.Contains(text(r), "ARROWHEAD_MEMORY_MAX_METADATA_BYTES") {
		t.Fatalf("oversized metadata: %s", text(r))
	}
	if strings.Contains(stderr.String(), "tangerine") || strings.Contains(stderr.String(), "metric units") {
		t.Fatal("memory content reached the log")
	}
}

// TestMemoryOwnersIsolatedOverHTTP: two verified subjects on one server
// never see each other's memories or keys, on every backend; a foreign id
// is not found, the same as a missing one.
func TestMemoryOwnersIsolatedOverHTTP(t *testing.T) {
	for _, backend := range memoryBackends {
		t.Run(backend.name, func(t *testing.T) { memoryOwnersScenario(t, backend.env(t)) })
	}
}

func memoryOwnersScenario(t *testing.T, env map[string]string) {
	s := startHTTP(t, env)
	alice := s.connect(t, s.token(t, "alice", "memory:read", "memory:write"))
	bob := s.connect(t, s.token(t, "bob", "memory:read", "memory:write"))
	r := call(t, alice, "memory_store", map[string]any{"namespace": "shared", "content": "alice's plan"})
	sc, _ := r.StructuredContent.(map[string]any)
	id, _ := sc["id"].(string)
	if r.IsError || id == "" {
		t.Fatalf("alice store: %s", text(r))
	}
	if r = call(t, alice, "kv_set", map[string]any{"key": "k", "value": "alice's value"}); r.IsError {
		t.Fatalf("alice kv_set: %s", text(r))
	}
	foreign := call(t, bob, "memory_delete", map[string]any{"namespace": "shared", "id": id})
	missing := call(t, bob, "memory_delete", map[string]any{"namespace": "shared", "id": strings.Repeat("0", 32)})
	if !foreign.IsError || text(foreign) != text(missing) {
		t.Fatalf("foreign id %q differs from missing %q", text(foreign), text(missing))
	}
	if r = call(t, bob, "memory_search", map[string]any{"namespace": "shared", "query": "plan"}); r.IsError || strings.Contains(text(r), "alice") {
		t.Fatalf("bob searched alice's memories: %s", text(r))
	}
	if r = call(t, bob, "memory_list", map[string]any{"namespace": "shared"}); strings.Contains(text(r), id) {
		t.Fatalf("bob listed alice's memory: %s", text(r))
	}
	if r = call(t, bob, "kv_get", map[string]any{"key": "k"}); !r.IsError || strings.Contains(text(r), "alice") {
		t.Fatalf("bob read alice's key: %s", text(r))
	}
	if r = call(t, alice, "memory_list", map[string]any{"namespace": "shared"}); !strings.Contains(text(r), id) {
		t.Fatalf("alice lost her memory: %s", text(r))
	}
	readOnly := s.connect(t, s.token(t, "carol", "memory:read"))
	if r = call(t, readOnly, "memory_store", map[string]any{"namespace": "n", "content": "x"}); !r.IsError {
		t.Fatal("memory:read alone could write")
	}
}

// TestMemoryDSNFailsClosed: with ARROWHEAD_MEMORY_DSN on a database whose
// memory tables were never migrated, or one that does not answer, the
// server does not start, names the variable and says what to run, and
// prints no part of the DSN.
func TestMemoryDSNFailsClosed(t *testing.T) {
	unmigrated := pgtest.PrivateSchema(t, pgtest.PostgresDSN(t))
	for name, dsn := range map[string]string{
		"unmigrated": unmigrated,
		"down":       "postgres://arrowhead:hunter2@127.0.0.1:1/memories?sslmode=disable&connect_timeout=2",
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(binary)
			cmd.Env = baseEnv(t, t.TempDir(), map[string]string{"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_MEMORY_DSN": dsn})
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "ARROWHEAD_MEMORY_DSN") || !strings.Contains(string(out), "arrowhead migrate") {
				t.Fatalf("start-up with %s memory tables: %v\n%s", name, err, out)
			}
			if strings.Contains(string(out), "hunter2") || strings.Contains(string(out), dsn) {
				t.Fatalf("the refusal printed the DSN:\n%s", out)
			}
		})
	}
}
