package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestAssistOverStdio runs the three assist tools through the built binary
// on both protocol legs against a loopback OpenAI-compatible fake model
// reached through ARROWHEAD_LLM_INTERNAL_HOSTS.
func TestAssistOverStdio(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		answer := "It adds two numbers. <script>alert(1)</script>"
		if last := req.Messages[len(req.Messages)-1].Content; strings.Contains(last, "Passages:") {
			answer = "[1, 0, 1, 7]"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": answer}}}})
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "app.py"), []byte("def add(a, b):\n    return a + b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			c, _ := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_REPO_ROOT": repo,
				"ARROWHEAD_LLM_PROVIDER": "openai", "ARROWHEAD_LLM_ENDPOINT": srv.URL + "/v1/chat/completions",
				"ARROWHEAD_LLM_INTERNAL_HOSTS": u.Host, "ARROWHEAD_LLM_API_KEY": "sk-e2e-canary"}, leg.opts...)
			r := call(t, c, "code_explain", map[string]any{"path": "app.py"})
			if r.IsError || !strings.Contains(text(r), "adds two numbers") || strings.Contains(text(r), "<script") {
				t.Fatalf("code_explain: %s", text(r))
			}
			r = call(t, c, "summarize_diff", map[string]any{"diff": "--- a/app.py\n+++ b/app.py\n+x = 1\n"})
			if r.IsError || !strings.Contains(text(r), "UNTRUSTED") {
				t.Fatalf("summarize_diff: %s", text(r))
			}
			r = call(t, c, "rerank", map[string]any{"query": "sum", "candidates": []any{"a", "b", "c"}})
			body, _ := json.Marshal(r.StructuredContent)
			if r.IsError || !strings.Contains(string(body), `"order":[1,0,2]`) {
				t.Fatalf("rerank: %s %s", text(r), body)
			}
			r = call(t, c, "code_explain", map[string]any{"path": "../etc/passwd"})
			if !r.IsError {
				t.Fatal("a traversal reached the model")
			}
		})
	}
	if n := calls.Load(); n != 2*3 {
		t.Fatalf("the model saw %d requests, want %d", n, 2*3)
	}
}

// sampler answers every sampling request with its own "model" and counts
// them.
type sampler struct{ calls atomic.Int32 }

func (s *sampler) CreateMessage(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	s.calls.Add(1)
	answer := "The client's model says: it adds."
	if len(req.Messages) > 0 {
		// The content's Go type differs between the legs; its JSON does not.
		if b, _ := json.Marshal(req.Messages[0].Content); strings.Contains(string(b), "Passages:") {
			answer = "[2, 1, 0]"
		}
	}
	return &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent(answer)},
		Model:           "client-model",
	}, nil
}

// TestAssistSamplingOverStdio asks the connected client's own model
// (ARROWHEAD_LLM_PROVIDER=sampling) on both legs, and refuses cleanly for a
// client that does not offer sampling.
func TestAssistSamplingOverStdio(t *testing.T) {
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "app.py"), []byte("def add(a, b):\n    return a + b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_REPO_ROOT": repo, "ARROWHEAD_LLM_PROVIDER": "sampling"}
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			s := &sampler{}
			c, _ := startStdio(t, env, append(append([]client.ClientOption{}, leg.opts...), client.WithSamplingHandler(s))...)
			r := call(t, c, "code_explain", map[string]any{"path": "app.py"})
			if r.IsError || !strings.Contains(text(r), "client's model says") {
				t.Fatalf("code_explain: %s", text(r))
			}
			r = call(t, c, "rerank", map[string]any{"query": "q", "candidates": []any{"a", "b", "c"}})
			body, _ := json.Marshal(r.StructuredContent)
			if r.IsError || !strings.Contains(string(body), `"order":[2,1,0]`) {
				t.Fatalf("rerank: %s %s", text(r), body)
			}
			if s.calls.Load() < 2 {
				t.Fatalf("the client's model was asked %d times", s.calls.Load())
			}
			plain, _ := startStdio(t, env, leg.opts...)
			r = call(t, plain, "summarize_diff", map[string]any{"diff": "+x\n"})
			if !r.IsError || !strings.Contains(text(r), "does not offer sampling") {
				t.Fatalf("no sampling capability: %s", text(r))
			}
		})
	}
}
