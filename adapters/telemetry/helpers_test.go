package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// canary is a realistic secret-looking value fed as argument values; it must
// never reach a log line, a span or a metric.
const canary = "CANARY-sk_live_7Qx9Zr2Lw8Vb"

// Known W3C trace context used as the caller's.
const (
	callerTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpanID      = "00f067aa0ba902b7"
	callerTraceparent = "00-" + callerTraceID + "-" + callerSpanID + "-01"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes the sink may
// receive.
type syncBuffer = coretest.SyncBuffer

// lines parses every JSON line written to b, failing on anything that is
// not one JSON object per line.
func lines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" {
			if len(b) == 0 {
				return nil
			}
			t.Fatalf("line %d is empty", i+1)
		}
		var m map[string]any
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatalf("line %d is not a JSON object: %v\n%s", i+1, err, l)
		}
		if d.More() {
			t.Fatalf("line %d holds more than one JSON value", i+1)
		}
		out = append(out, m)
	}
	return out
}

func keysOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// unlimited is a rate store that always admits (and keeps flow marks, as
// the guard chain needs, in its Counter).
type unlimited struct{ portstest.Counter }

func (*unlimited) Take(context.Context, string, int) (ports.RateDecision, error) {
	return ports.RateDecision{Allowed: true}, nil
}

// probeScope is the scope of the test tools.
const probeScope = "probe:read"

type probeInput struct {
	Text string `json:"text" description:"text"`
	Note string `json:"note,omitempty" description:"note"`
}

type probeOutput struct {
	Length float64 `json:"length,omitempty" description:"length"`
}

func probeTool(t testing.TB, name string, h catalog.Handler[probeInput, probeOutput]) catalog.ToolSpec {
	t.Helper()
	spec := catalog.Define[probeInput, probeOutput](catalog.ToolDef{
		Name:        name,
		Family:      catalog.FamilyCore,
		Scope:       probeScope,
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_" + strings.ToUpper(name) + "_PER_MINUTE", Default: 600},
		Description: "Test probe. Example: " + name + "(text=\"x\").",
	}).Bind(h)
	if err := spec.Check(); err != nil {
		t.Fatal(err)
	}
	return spec
}

// newProbeApp builds the real guard chain with four tools whose handlers
// handle the canary the way careless code would: echo it, put it in an
// error, panic with it, or refuse deliberately.
func newProbeApp(t testing.TB, sink ports.AuditSink, tracer ports.Tracer, metrics ports.Metrics) *core.App {
	t.Helper()
	type reply = *catalog.Reply[probeOutput]
	tools := []catalog.ToolSpec{
		probeTool(t, "probe_echo", func(_ context.Context, _ catalog.Call, in probeInput) (reply, error) {
			return catalog.Answer(probeOutput{Length: float64(len(in.Text))}, in.Text), nil
		}),
		probeTool(t, "probe_fail", func(_ context.Context, _ catalog.Call, in probeInput) (reply, error) {
			return nil, fmt.Errorf("driver said: password=%s", in.Text)
		}),
		probeTool(t, "probe_panic", func(_ context.Context, _ catalog.Call, in probeInput) (reply, error) {
			panic(errors.New("bad input " + in.Text))
		}),
		probeTool(t, "probe_refuse", func(context.Context, catalog.Call, probeInput) (reply, error) {
			return nil, catalog.Refuse(catalog.KindNotFound, "Not found.")
		}),
	}
	app, err := core.New(core.Deps{
		Settings:   settings.Defaults(),
		Authorizer: portstest.AllowAll{},
		Rates:      &unlimited{},
		Audit:      sink,
		Tracer:     tracer,
		Metrics:    metrics,
		Clock:      ports.SystemClock{},
		Families:   []core.Member{coretest.Tools(tools...)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// probeCall is one call through the chain and the audit line it must leave.
type probeCall struct {
	name    string
	run     func(ctx context.Context, app *core.App, opts ...core.CallOption)
	kind    ports.ComponentKind
	comp    string
	status  string
	refusal string
}

// probeCalls feeds the canary through every door of the chain: tool
// arguments (declared and undeclared), an unknown tool name, a resource URI,
// prompt arguments and a completion value.
func probeCalls() []probeCall {
	caller := ports.NewPrincipal("alice", probeScope)
	args := map[string]any{"text": canary, "note": "token " + canary}
	tool := func(name string, a any) func(context.Context, *core.App, ...core.CallOption) {
		return func(ctx context.Context, app *core.App, opts ...core.CallOption) {
			_, _ = app.Call(ctx, caller, name, a, opts...)
		}
	}
	return []probeCall{
		{name: "ok", run: tool("probe_echo", args), kind: ports.ComponentTool, comp: "probe_echo", status: ports.StatusOK},
		{name: "error", run: tool("probe_fail", args), kind: ports.ComponentTool, comp: "probe_fail", status: ports.StatusError, refusal: "internal"},
		{name: "panic", run: tool("probe_panic", args), kind: ports.ComponentTool, comp: "probe_panic", status: ports.StatusError, refusal: "internal"},
		{name: "refused", run: tool("probe_refuse", args), kind: ports.ComponentTool, comp: "probe_refuse", status: ports.StatusRefused, refusal: "not_found"},
		{name: "undeclared", run: tool("probe_echo", map[string]any{"text": "x", canary: canary}), kind: ports.ComponentTool, comp: "probe_echo", status: ports.StatusRefused, refusal: "validation"},
		{name: "unknown tool", run: tool(canary, args), kind: ports.ComponentTool, comp: "unknown", status: ports.StatusRefused, refusal: "unknown"},
		{name: "resource", run: func(ctx context.Context, app *core.App, opts ...core.CallOption) {
			_, _ = app.ReadResource(ctx, caller, "doc://secrets/"+canary+"?k="+canary, opts...)
		}, kind: ports.ComponentResource, comp: "unknown", status: ports.StatusRefused, refusal: "unknown"},
		{name: "prompt", run: func(ctx context.Context, app *core.App, opts ...core.CallOption) {
			_, _ = app.GetPrompt(ctx, caller, canary, map[string]string{"topic": canary}, opts...)
		}, kind: ports.ComponentPrompt, comp: "unknown", status: ports.StatusRefused, refusal: "unknown"},
		{name: "completion", run: func(ctx context.Context, app *core.App, opts ...core.CallOption) {
			_, _ = app.Complete(ctx, caller, core.CompletionRef{Type: "prompt", Name: canary}, "topic", canary, map[string]string{"x": canary}, opts...)
		}, kind: ports.ComponentCompletion, comp: "unknown", status: ports.StatusRefused, refusal: "unknown"},
	}
}

// traceOpt sends the caller's known traceparent with a call.
func traceOpt() core.CallOption {
	return core.WithTraceContext(ports.TraceCarrier{TraceparentKey: callerTraceparent})
}

// wantSpanName is the span name the MCP semantic conventions give a call:
// "{mcp.method.name} {target}" for tools and prompts, the bare method for
// resource reads and completions.
func wantSpanName(kind ports.ComponentKind, comp string) string {
	switch kind {
	case ports.ComponentTool:
		return "tools/call " + comp
	case ports.ComponentPrompt:
		return "prompts/get " + comp
	case ports.ComponentResource:
		return "resources/read"
	case ports.ComponentCompletion:
		return "completion/complete"
	}
	return ""
}

// wantErrorType is the error.type of a call that ended with status: a
// tool's isError result, a JSON-RPC internal error for a resource or
// prompt, nothing for an empty completion.
func wantErrorType(kind ports.ComponentKind, status string) string {
	if status == ports.StatusOK {
		return ""
	}
	switch kind {
	case ports.ComponentTool:
		return "tool_error"
	case ports.ComponentResource, ports.ComponentPrompt:
		return "-32603"
	}
	return ""
}
