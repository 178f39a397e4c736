package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

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
		// Mentioning resources/read does not exempt a call from rerouting.
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{"m":"resources/read"}}}`, unknownTool},
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

// TestUnresolvedURIsMeetTheChain: a resources/read whose URI no template
// can match (mcp-go's RFC 6570 expressions admit only URI characters) is
// answered by the core, never by mcp-go: the same refusal as any unknown
// URI, no echo of the URI, one audit line, the unknown-name rate limit.
func TestUnresolvedURIsMeetTheChain(t *testing.T) {
	var got []string
	res := catalog.ResourceSpec{Name: "document", Template: "doc://{+path}", Scope: "docs:read",
		Match: func(uri string) (map[string]string, bool) {
			rest, ok := strings.CutPrefix(uri, "doc://")
			return map[string]string{"path": rest}, ok
		},
		Handler: func(_ context.Context, call catalog.ResourceCall) ([]catalog.ResourceContent, error) {
			got = append(got, call.Vars["path"])
			return []catalog.ResourceContent{{URI: call.URI, Text: "body"}}, nil
		}}
	s := settings.Defaults()
	s.Limits = map[string]int{settings.DefaultToolLimitVar: 4}
	audit := &portstest.Audit{}
	app, err := core.New(core.Deps{Settings: s, Authorizer: portstest.AllowAll{}, Rates: &portstest.Counter{}, Audit: audit,
		Tracer: portstest.NoopTracer{}, Metrics: portstest.NoopMetrics{}, Clock: ports.SystemClock{},
		Families: []core.Member{coretest.Family(catalog.FamilyDocs, core.Components{Resources: []catalog.ResourceSpec{res}})}})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(app, Options{Name: "t", Version: "1", Principal: func(context.Context) ports.Principal {
		return ports.NewPrincipal("s", "docs:read")
	}})
	read := func(uri string) (result json.RawMessage, message string) {
		t.Helper()
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": map[string]any{"uri": uri}})
		raw, err := json.Marshal(srv.MCPServer().HandleMessage(context.Background(), srv.reroute(req, nil)))
		if err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Error != nil {
			return nil, resp.Error.Message
		}
		return resp.Result, ""
	}

	// A known template with a raw space still reaches its handler, with
	// the URI exactly as sent.
	if _, msg := read("doc://a b.md"); msg != "" || len(got) != 1 || got[0] != "a b.md" {
		t.Fatalf("doc URI with a space: refusal %q, handler saw %q", msg, got)
	}
	before := len(audit.Records())
	for _, uri := range []string{"nope://a b", "x://\u00e9t\u00e9", "x://%zz", "x://<script>"} {
		_, msg := read(uri)
		if msg != catalog.MsgUnknownResource {
			t.Errorf("%q answered %q, want the core's %q", uri, msg, catalog.MsgUnknownResource)
		}
	}
	if n := len(audit.Records()) - before; n != 4 {
		t.Fatalf("%d audit lines for 4 unknown URIs, want one each", n)
	}
	// The unknown-name bucket (4 per minute here) is spent: the next
	// unknown URI meets the rate limit.
	if _, msg := read("nope://again now"); msg == catalog.MsgUnknownResource {
		t.Fatal("unknown URIs are not rate limited")
	}
	last := audit.Records()[len(audit.Records())-1]
	if last.Status != "refused" {
		t.Fatalf("audit status %q, want refused", last.Status)
	}

	// The 2026-07-28 Mcp-Name header follows the rewritten URI.
	h := http.Header{}
	h.Set("Mcp-Name", "eA==")
	srv.reroute([]byte(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"x y"}}`), h)
	if v, _ := mcp.EncodeHeaderValue(unresolvedPrefix + "x%20y"); h.Get("Mcp-Name") != v {
		t.Fatalf("Mcp-Name %q does not follow the rewritten URI", h.Get("Mcp-Name"))
	}
}
