package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
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
		Tracer: nop.Tracer{}, Metrics: nop.Metrics{}, Clock: ports.SystemClock{},
		Families: []core.Member{coretest.Family(catalog.FamilyCore, core.Components{Tools: []catalog.ToolSpec{tool}, Prompts: []catalog.PromptSpec{prompt}})}})
	if err != nil {
		t.Fatal(err)
	}
	return New(app, Options{Name: "t", Version: "1"})
}

// handle sends one JSON-RPC message to srv as a transport would and
// returns the tool result's text, or the JSON-RPC error's message.
func handle(t *testing.T, srv *Server, body string) (text string, isError bool, rpcErr string) {
	t.Helper()
	raw, err := json.Marshal(srv.MCPServer().HandleMessage(context.Background(), json.RawMessage(body)))
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		return "", false, resp.Error.Message
	}
	if len(resp.Result.Content) > 0 {
		text = resp.Result.Content[0].Text
	}
	return text, resp.Result.IsError, ""
}

// TestUnknownNamesMeetTheChain: a tools/call or prompts/get naming
// something not registered is answered by the core (the refusal a hidden
// component gets, one audit line), never by mcp-go, which would echo the
// name; the name decides as encoding/json decodes it, whatever the
// spelling of the message.
// callServer serves one tool (calculate, which counts its runs in ran) and
// one prompt to a caller holding both scopes, with ceilings no test
// reaches, recording the audit lines.
func callServer(tb testing.TB) (srv *Server, audit *portstest.Audit, ran *int) {
	ran = new(int)
	tool := catalog.Define[struct{}, struct{}](catalog.ToolDef{
		Name: "calculate", Family: catalog.FamilyCore, Scope: "tools:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 1000000},
		Description: "x. Example: calculate()",
	}).Bind(func(context.Context, catalog.Call, struct{}) (*catalog.Reply[struct{}], error) {
		*ran++
		return catalog.Answer(struct{}{}, "ran"), nil
	})
	prompt := catalog.PromptSpec{Name: "summarize_document", Scope: "docs:read",
		Handler: func(context.Context, catalog.PromptCall) (catalog.PromptResult, error) {
			return catalog.PromptResult{Description: "d"}, nil
		}}
	s := settings.Defaults()
	s.Limits = map[string]int{settings.DefaultToolLimitVar: 1000000}
	audit = &portstest.Audit{}
	app, err := core.New(core.Deps{Settings: s, Authorizer: portstest.AllowAll{}, Rates: &portstest.Counter{}, Audit: audit,
		Tracer: nop.Tracer{}, Metrics: nop.Metrics{}, Clock: ports.SystemClock{},
		Families: []core.Member{coretest.Family(catalog.FamilyCore, core.Components{Tools: []catalog.ToolSpec{tool}, Prompts: []catalog.PromptSpec{prompt}})}})
	if err != nil {
		tb.Fatal(err)
	}
	srv = New(app, Options{Name: "t", Version: "1", Principal: func(context.Context) ports.Principal {
		return ports.NewPrincipal("s", "tools:read", "docs:read")
	}})
	return srv, audit, ran
}

func TestUnknownNamesMeetTheChain(t *testing.T) {
	srv, audit, ranp := callServer(t)
	calls := []struct {
		body  string
		known bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculate","arguments":{}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"_unknown"}}`, false},
		// A known name inside the arguments does not vouch for the tool name.
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"name":"calculate"},"name":"nope"}}`, false},
		// The name is the one mcp-go decodes: escapes, case-folded keys
		// and the last of duplicate keys count as encoding/json counts them.
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"na\u006de":"nope"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"na\u006de":"calc\u0075late"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"calculate"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculate","name":"nope"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"caf\u00e9"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, false},
	}
	for _, c := range calls {
		before, ranBefore := len(audit.Records()), *ranp
		text, isErr, rpcErr := handle(t, srv, c.body)
		if rpcErr != "" {
			t.Errorf("%s: mcp-go answered %q itself", c.body, rpcErr)
			continue
		}
		if c.known && (isErr || text != "ran" || *ranp != ranBefore+1) {
			t.Errorf("%s: %q (error %v), want the tool's answer", c.body, text, isErr)
		}
		if !c.known && (!isErr || text != catalog.MsgUnknownTool || *ranp != ranBefore) {
			t.Errorf("%s: %q (error %v), want the core's %q", c.body, text, isErr, catalog.MsgUnknownTool)
		}
		if n := len(audit.Records()) - before; n != 1 {
			t.Errorf("%s: %d audit lines, want 1", c.body, n)
		}
		if last := audit.Last(); !c.known && (last.Status != "refused" || strings.Contains(last.Name, "nope")) {
			t.Errorf("%s: audit line %+v", c.body, last)
		}
	}

	if _, _, rpcErr := handle(t, srv, `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"summarize_document"}}`); rpcErr != "" {
		t.Fatalf("a known prompt was refused: %q", rpcErr)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"evil"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"_unknown"}}`,
	} {
		before := len(audit.Records())
		if _, _, rpcErr := handle(t, srv, body); rpcErr != catalog.MsgUnknownPrompt {
			t.Errorf("%s: answered %q, want the core's %q", body, rpcErr, catalog.MsgUnknownPrompt)
		}
		if n := len(audit.Records()) - before; n != 1 {
			t.Errorf("%s: %d audit lines, want 1", body, n)
		}
	}
	// A message mcp-go cannot decode is still mcp-go's to refuse.
	if _, _, rpcErr := handle(t, srv, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`); rpcErr == "" {
		t.Error("an undecodable call was not refused")
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
		Tracer: nop.Tracer{}, Metrics: nop.Metrics{}, Clock: ports.SystemClock{},
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
		raw, err := json.Marshal(srv.MCPServer().HandleMessage(context.Background(), req))
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
}

// BenchmarkCallMessage is one tools/call message through the adapter and
// mcp-go to the chain and back, for a known and an unknown name: what the
// unknown-name hooks cost beside the call itself.
func BenchmarkCallMessage(b *testing.B) {
	srv, _, _ := callServer(b)
	ctx := context.Background()
	for _, c := range []struct{ name, body string }{
		{"known", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"calculate","arguments":{}}}`},
		{"unknown", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"nope","arguments":{}}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			msg := json.RawMessage(c.body)
			b.ReportAllocs()
			for b.Loop() {
				srv.MCPServer().HandleMessage(ctx, msg)
			}
		})
	}
}
