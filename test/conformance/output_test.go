package conformance_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	mcpadapter "github.com/arrowhead-go/arrowhead/adapters/mcp"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// TestOutputsMatchTheirSchemas calls every tool that can succeed offline
// through mcp-go with its JSON Schema output validation on: a structured
// result that strays from the declared output schema fails the call.
func TestOutputsMatchTheirSchemas(t *testing.T) {
	base := t.TempDir()
	sandbox := filepath.Join(base, "sandbox")
	if err := os.MkdirAll(sandbox, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sandbox, "a.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(base, "repo")
	for rel, body := range map[string]string{
		"go.mod": "module example.com/m\n", "lib/lib.go": "package lib\n\nimport \"fmt\"\n\nfunc Hello() { fmt.Println(\"refunds\") }\n",
		"src/app.py": "import os\n\nclass App:\n    def run(self):\n        return 'refunds'\n", "web/a.js": "function hi() {}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A loopback OpenAI-compatible model for the assist tools.
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices":[{"message":{"content":"It runs the [app](https://example.com). [1, 0]"}}]}`)
	}))
	defer model.Close()
	modelURL, _ := url.Parse(model.URL)
	env := map[string]string{
		"ARROWHEAD_LLM_PROVIDER": "openai", "ARROWHEAD_LLM_ENDPOINT": model.URL + "/v1/chat/completions",
		"ARROWHEAD_LLM_INTERNAL_HOSTS": modelURL.Host,
		"ARROWHEAD_REPO_ROOT":          repo,
		"ARROWHEAD_JAIL_ROOT":          sandbox, "ARROWHEAD_DOCS_ROOT": filepath.Join(base, "docs"), "ARROWHEAD_DATA_DIR": filepath.Join(base, "data"),
		"ARROWHEAD_PGVECTOR_COLLECTIONS": "doc_chunks", "ARROWHEAD_EMBEDDING_DIMENSIONS": "16", "ARROWHEAD_RATE_LIMIT_ENABLED": "false",
	}
	s := coretest.Settings(t, env)
	rt, err := wire.Build(t.Context(), s, wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	srv := mcpadapter.New(rt.App, mcpadapter.Options{Name: "conformance", Version: "1", ValidateOutput: true,
		Principal: func(context.Context) ports.Principal { return ports.Operator() }})
	c, err := client.NewInProcessClient(srv.MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ClientInfo = mcp.Implementation{Name: "conformance", Version: "1"}
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	embedding := make([]any, 16)
	for i := range embedding {
		embedding[i] = 0.25
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"calculate", map[string]any{"expression": "1 / 3"}},
		{"read_file", map[string]any{"path": "a.txt"}},
		{"doc_write", map[string]any{"path": "notes/a.md", "content": "# Refunds\n\nRefunds take five days. key AKIAIOSFODNN7EXAMPLE\n"}},
		{"doc_write", map[string]any{"path": "notes/b.json", "content": `{"b": [1, 2], "a": null}`}},
		{"doc_read", map[string]any{"path": "notes/a.md"}},
		{"doc_read", map[string]any{"path": "notes/b.json"}},
		{"doc_search", map[string]any{"query": "Refunds"}},
		{"doc_scan", map[string]any{}},
		{"doc_index", map[string]any{"collection": "doc_chunks"}},
		{"vector_search", map[string]any{"collection": "doc_chunks", "embedding": embedding, "k": 3}},
		{"vector_query", map[string]any{"collection": "doc_chunks", "query": "refunds"}},
		{"hybrid_query", map[string]any{"collection": "doc_chunks", "query": "refunds"}},
		{"code_search", map[string]any{"query": "refunds"}},
		{"code_read", map[string]any{"path": "src/app.py", "start_line": 3, "end_line": 0}},
		{"symbol_map", map[string]any{}},
		{"dependency_graph", map[string]any{}},
		{"code_explain", map[string]any{"path": "src/app.py"}},
		{"summarize_diff", map[string]any{"diff": "--- a/x\n+++ b/x\n+y\n"}},
		{"rerank", map[string]any{"query": "app", "candidates": []any{"a", "b"}, "top_k": 1}},
		{"workingset_update", map[string]any{"name": "bug", "action": "pin", "items": []any{
			map[string]any{"kind": "repo_file", "identifier": "src/app.py", "note": "entry point"},
			map[string]any{"kind": "doc", "identifier": "notes/a.md"}}}},
		{"workingset_get", map[string]any{"name": "bug"}},
		{"pack_context", map[string]any{"query": "refunds", "working_set": "bug", "token_budget": 400}},
		{"memory_store", map[string]any{"namespace": "prefs", "content": "prefers metric units", "metadata": map[string]any{"from": "chat"}}},
		{"memory_search", map[string]any{"namespace": "prefs", "query": "units"}},
		{"memory_list", map[string]any{"namespace": "prefs"}},
		{"kv_set", map[string]any{"key": "draft", "value": "step 2", "ttl_seconds": 60}},
		{"kv_get", map[string]any{"key": "draft"}},
		{"kv_delete", map[string]any{"key": "draft"}},
		{"memory_delete", nil}, // the id memory_store returned
		{"scan_corpus_async", map[string]any{"path_prefix": "notes/"}},
		{"task_schedule", map[string]any{"delay_seconds": 0, "payload": map[string]any{"note": "check build"}, "repeat_seconds": 3600}},
		{"task_list", map[string]any{}},
		{"task_get", nil},    // the scan's id, once it has finished
		{"task_update", nil}, // the timer: cancelled, or finished already
	}
	seen := map[string]bool{}
	var memoryID, scanID, timerID any
	for _, call := range calls {
		var req mcp.CallToolRequest
		req.Params.Name = call.tool
		req.Params.Arguments = call.args
		switch call.tool {
		case "memory_delete":
			req.Params.Arguments = map[string]any{"namespace": "prefs", "id": memoryID}
		case "task_get":
			req.Params.Arguments = map[string]any{"task_id": scanID}
		case "task_update":
			req.Params.Arguments = map[string]any{"task_id": timerID, "action": "cancel"}
		}
		res, err := c.CallTool(t.Context(), req)
		for call.tool == "task_get" && err == nil && !res.IsError && res.StructuredContent.(map[string]any)["status"] == "working" {
			time.Sleep(10 * time.Millisecond) // until the background scan finishes, so its result is checked too
			res, err = c.CallTool(t.Context(), req)
		}
		if err != nil {
			t.Fatalf("%s: %v", call.tool, err)
		}
		if res.IsError || res.StructuredContent == nil {
			t.Errorf("%s did not succeed with schema-valid output: %+v", call.tool, res.Content)
		}
		if out, ok := res.StructuredContent.(map[string]any); ok {
			switch call.tool {
			case "memory_store":
				memoryID = out["id"]
			case "scan_corpus_async":
				scanID = out["task_id"]
			case "task_schedule":
				timerID = out["task_id"]
			}
		}
		seen[call.tool] = true
	}
	// Every tool of the default catalog that cannot run offline is named
	// here, so a new tool cannot slip past this test unnoticed.
	offline := map[string]bool{"safe_fetch": true, "doc_retrieve": true, "sql_query": true}
	for _, tool := range rt.App.Tools() {
		if !seen[tool.Spec.Name()] && !offline[tool.Spec.Name()] {
			t.Errorf("%s is not exercised by the output conformance test", tool.Spec.Name())
		}
	}
}
