package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

func testServer(t *testing.T) *Server {
	t.Helper()
	tool := catalog.Define[struct{}, struct{}](catalog.ToolDef{
		Name: "calculate", Family: catalog.FamilyCore, Scope: "tools:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 1},
		Description: "x. Example: calculate()",
	}).Bind(func(context.Context, catalog.Call, struct{}) (*catalog.Reply[struct{}], error) {
		return catalog.Answer(struct{}{}, ""), nil
	})
	prompt := catalog.PromptSpec{Name: "summarize_document", Scope: "docs:read",
		Handler: func(context.Context, catalog.PromptCall) (catalog.PromptResult, error) {
			return catalog.PromptResult{}, nil
		}}
	s := settings.Defaults()
	app, err := core.New(core.Deps{Settings: s, Authorizer: portstest.AllowAll{}, Rates: &portstest.Counter{}, Audit: &portstest.Audit{},
		Tracer: portstest.NoopTracer{}, Metrics: portstest.NoopMetrics{}, Clock: ports.SystemClock{},
		Families: []core.Member{coretest.Family(catalog.FamilyCore, core.Components{Tools: []catalog.ToolSpec{tool}, Prompts: []catalog.PromptSpec{prompt}})}})
	if err != nil {
		t.Fatal(err)
	}
	return New(app, Options{Name: "t", Version: "1"})
}

func nameOf(t *testing.T, body []byte) string {
	t.Helper()
	var m struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("reroute produced invalid JSON: %s", body)
	}
	return m.Params.Name
}

func TestReroute(t *testing.T) {
	s := testServer(t)
	cases := []struct {
		body string
		want string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"1"}}}`, "calculate"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, unknownTool},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"_unknown"}}`, unknownTool},
		// A known name inside the arguments must not vouch for the tool name.
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"name":"calculate"},"name":"nope"}}`, unknownTool},
		// Escaped key spelling takes the exact path.
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"na\u006de":"nope"}}`, unknownTool},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name" : "calculate"}}`, "calculate"},
		{`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"summarize_document"}}`, "summarize_document"},
		{`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"evil"}}`, unknownPrompt},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, ""},
	}
	for _, c := range cases {
		got := s.reroute([]byte(c.body), nil)
		if n := nameOf(t, got); n != c.want {
			t.Errorf("%s: name %q, want %q", c.body, n, c.want)
		}
	}
	// The 2026-07-28 Mcp-Name header follows the body.
	h := http.Header{}
	h.Set("Mcp-Name", "bm9wZQ==")
	s.reroute([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`), h)
	if h.Get("Mcp-Name") == "bm9wZQ==" {
		t.Fatal("the Mcp-Name header still names the unknown tool")
	}
	// Malformed input passes through untouched for mcp-go to refuse.
	if got := s.reroute([]byte(`{"method":"tools/call",`), nil); string(got) != `{"method":"tools/call",` {
		t.Fatal("malformed body was changed")
	}
}
