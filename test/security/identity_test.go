package security_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// TestTokenNamedLikeTheOperatorOwnsNothingOfIt: the stdio operator stores a
// memory, a kv entry, a working set and a timer; a token principal whose
// sub is "local-operator", on a server over the same data directory, sees
// none of them, and the operator sees none of the token's.
// A token caller's data stored the old way, under its bare subject, is
// carried over to its issuer-qualified key; the operator's never is.
func TestTokenNamedLikeTheOperatorOwnsNothingOfIt(t *testing.T) {
	base := t.TempDir()
	coretest.WriteFiles(t, base, map[string]string{"docs/a.md": "# a\n", "repo/x.go": "package x\n", "sandbox/s.txt": "s\n"})
	env := map[string]string{"ARROWHEAD_PROFILE": "full", "ARROWHEAD_REPO_ROOT": filepath.Join(base, "repo"),
		"ARROWHEAD_JAIL_ROOT": filepath.Join(base, "sandbox"), "ARROWHEAD_DOCS_ROOT": filepath.Join(base, "docs"),
		"ARROWHEAD_DATA_DIR": filepath.Join(base, "data"), "ARROWHEAD_MEMORY_ROOT": filepath.Join(base, "memory"),
		"ARROWHEAD_RATE_LIMIT_ENABLED": "false"}
	open := func() *wire.Runtime {
		rt, err := wire.Build(t.Context(), coretest.Settings(t, env), wire.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	call := func(rt *wire.Runtime, p ports.Principal, tool string, args map[string]any) (map[string]any, *catalog.ToolError) {
		t.Helper()
		res, te := coretest.Call(t, rt.App, p, tool, args)
		return res.Structured(), te
	}
	mustCall := func(rt *wire.Runtime, p ports.Principal, tool string, args map[string]any) map[string]any {
		t.Helper()
		out, te := call(rt, p, tool, args)
		if te != nil {
			t.Fatalf("%s: %s", tool, te.Message)
		}
		return out
	}
	op := ports.Operator()
	rt := open()
	mustCall(rt, op, "memory_store", map[string]any{"namespace": "ops", "content": "operator memory"})
	mustCall(rt, op, "kv_set", map[string]any{"key": "deploy", "value": "operator value"})
	mustCall(rt, op, "workingset_update", map[string]any{"name": "mine", "action": "pin", "items": []any{map[string]any{"kind": "doc", "identifier": "a.md"}}})
	mustCall(rt, op, "task_schedule", map[string]any{"delay_seconds": 3600})
	// A token caller as builds before issuer-keyed principals stored it:
	// under its bare subject.
	scopes := []string{"memory:read", "memory:write", "context:read", "context:write", "tasks:read", "tasks:write"}
	legacyBob := ports.NewPrincipal("bob", scopes...)
	mustCall(rt, legacyBob, "memory_store", map[string]any{"namespace": "ops", "content": "bob memory"})
	mustCall(rt, legacyBob, "kv_set", map[string]any{"key": "deploy", "value": "bob value"})
	_ = rt.Close(context.Background())

	// The same data directory, reopened as a server would be for HTTP; the
	// principal is what the bearer verifier builds for a token whose sub
	// claims the operator's name.
	env["ARROWHEAD_OAUTH_ISSUER"] = "https://idp.example"
	rt = open()
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	token := ports.NewPrincipal(ports.OperatorSubject, scopes...)
	token.Issuer = "https://idp.example"
	if token.Key() == op.Key() {
		t.Fatal("a token principal has the operator's key")
	}

	if out, te := call(rt, token, "memory_list", map[string]any{"namespace": "ops"}); te == nil && !strings.Contains(mustJSON(t, out), `"memories":[]`) {
		t.Errorf("the token lists the operator's memories: %s", mustJSON(t, out))
	}
	if out, te := call(rt, token, "memory_search", map[string]any{"namespace": "ops", "query": "operator memory"}); te == nil && strings.Contains(mustJSON(t, out), "operator memory") {
		t.Errorf("the token recalls the operator's memory: %s", mustJSON(t, out))
	}
	if out, te := call(rt, token, "kv_get", map[string]any{"key": "deploy"}); te == nil {
		t.Errorf("the token reads the operator's kv entry: %s", mustJSON(t, out))
	}
	if out, te := call(rt, token, "workingset_get", map[string]any{"name": "mine"}); te == nil {
		t.Errorf("the token reads the operator's working set: %s", mustJSON(t, out))
	}
	if out := mustCall(rt, token, "task_list", map[string]any{}); len(out["tasks"].([]any)) != 0 {
		t.Errorf("the token lists the operator's tasks: %s", mustJSON(t, out))
	}

	// bob's token finds what it stored before (carried over to its key);
	// the operator's subject is never carried.
	bob := ports.NewPrincipal("bob", scopes...)
	bob.Issuer = "https://idp.example"
	if out := mustCall(rt, bob, "kv_get", map[string]any{"key": "deploy"}); !strings.Contains(mustJSON(t, out), "bob value") {
		t.Errorf("bob's kv entry was not carried over: %s", mustJSON(t, out))
	}
	if out := mustCall(rt, bob, "memory_list", map[string]any{"namespace": "ops"}); !strings.Contains(mustJSON(t, out), `"caller":"bob"`) {
		t.Errorf("bob's memory was not carried over: %s", mustJSON(t, out))
	}

	// The token's own data is its own, and the operator's is still there.
	mustCall(rt, token, "kv_set", map[string]any{"key": "deploy", "value": "token value"})
	if out := mustCall(rt, op, "kv_get", map[string]any{"key": "deploy"}); !strings.Contains(mustJSON(t, out), "operator value") {
		t.Errorf("the operator's kv entry changed: %s", mustJSON(t, out))
	}
	if out := mustCall(rt, token, "kv_get", map[string]any{"key": "deploy"}); !strings.Contains(mustJSON(t, out), "token value") {
		t.Errorf("the token's kv entry: %s", mustJSON(t, out))
	}
	if out := mustCall(rt, op, "task_list", map[string]any{}); len(out["tasks"].([]any)) != 1 {
		t.Errorf("the operator's timer was not carried over: %s", mustJSON(t, out))
	}
	if out := mustCall(rt, op, "memory_list", map[string]any{"namespace": "ops"}); !strings.Contains(mustJSON(t, out), `"memories":[{`) {
		t.Errorf("the operator's memory was not carried over: %s", mustJSON(t, out))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
