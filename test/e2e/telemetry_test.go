package e2e

import (
	"bytes"
	"encoding/hex"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/telemetry/telemetrytest"
)

// TestStdioExportsLogsOverOTLP runs the binary with an OTLP endpoint on an
// in-process collector: the audit and operator lines arrive as OpenTelemetry
// log records, each audit record in the trace of its call's exported span,
// and no argument value reaches the collector.
func TestStdioExportsLogsOverOTLP(t *testing.T) {
	col := &telemetrytest.Collector{}
	srv := httptest.NewServer(col)
	t.Cleanup(srv.Close)

	c, stderr := startStdio(t, map[string]string{
		"ARROWHEAD_PROFILE":                     "core",
		"ARROWHEAD_OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL,
		"ARROWHEAD_OTEL_SERVICE_NAME":           "arrowhead-e2e",
	})
	if r := call(t, c, "calculate", map[string]any{"expression": "2 + 2"}); r.IsError {
		t.Fatalf("calculate: %s", text(r))
	}
	call(t, c, "calculate", map[string]any{"expression": canary})
	call(t, c, "no_such_tool", map[string]any{"x": canary})
	// Closing stdin stops the server, which flushes the exporters.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	audits := func() (n int) {
		for _, r := range col.LogRecords() {
			if r.GetBody().GetStringValue() == "audit" {
				n++
			}
		}
		return n
	}
	waitFor(t, func() bool { return audits() >= 3 })

	spans := map[string]string{}
	for _, s := range col.Spans() {
		spans[hex.EncodeToString(s.GetSpanId())] = hex.EncodeToString(s.GetTraceId())
	}
	var serving bool
	for _, r := range col.LogRecords() {
		attrs := telemetrytest.AttrMap(r.GetAttributes())
		switch r.GetBody().GetStringValue() {
		case "audit":
			tid, sid := hex.EncodeToString(r.GetTraceId()), hex.EncodeToString(r.GetSpanId())
			if spans[sid] == "" || spans[sid] != tid || attrs["trace_id"] != tid || attrs["span_id"] != sid {
				t.Errorf("audit record for %s in trace %q span %q (attributes %q/%q) names no exported span", attrs["name"], tid, sid, attrs["trace_id"], attrs["span_id"])
			}
		case "serving":
			serving = attrs["transport"] == "stdio"
		}
	}
	if !serving {
		t.Error("the operator's serving line was not exported")
	}
	for _, r := range col.Requests() {
		if bytes.Contains(r.Body, []byte(canary)) {
			t.Errorf("the canary reached the collector on %s", r.Path)
		}
	}
	// The local audit lines are still written, without the canary. mcp-go
	// mirrors the server's stderr without waiting for the mirror on
	// Close, so the lines may still be arriving.
	waitFor(t, func() bool { return strings.Count(stderr.String(), `"msg":"audit"`) >= 3 })
	if n := strings.Count(stderr.String(), `"msg":"audit"`); n < 3 || strings.Contains(stderr.String(), canary) {
		t.Errorf("stderr has %d audit lines (canary present: %v)", n, strings.Contains(stderr.String(), canary))
	}
}

// TestHTTPTelemetryFollowsMCPConventions serves streamable HTTP with an
// OTLP endpoint on an in-process collector and checks the spans and the
// mcp.server.operation.duration histogram against OpenTelemetry's MCP
// semantic conventions for a successful call, a tool error and a refused
// call: span names "{mcp.method.name} {target}", the method, tool name,
// protocol version and JSON-RPC request id (no session id: the
// 2026-07-28 protocol the client speaks has no sessions), error.type
// tool_error for a result with isError, and Arrowhead's refusal counter.
func TestHTTPTelemetryFollowsMCPConventions(t *testing.T) {
	col := &telemetrytest.Collector{}
	srv := httptest.NewServer(col)
	t.Cleanup(srv.Close)
	s := startHTTP(t, map[string]string{
		"ARROWHEAD_PROFILE":                     "core",
		"ARROWHEAD_OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL,
	})
	c := s.connect(t, s.token(t, "alice", "tools:read"))
	if r := call(t, c, "calculate", map[string]any{"expression": "6 * 7"}); r.IsError {
		t.Fatalf("calculate: %s", text(r))
	}
	if r := call(t, c, "calculate", map[string]any{"expression": "1 / 0"}); !r.IsError {
		t.Fatalf("1 / 0 answered %s", text(r))
	}
	// A caller without the tool's scope is refused.
	bob := s.connect(t, s.token(t, "bob", "nothing"))
	if r := call(t, bob, "calculate", map[string]any{"expression": "1"}); !r.IsError {
		t.Fatalf("the unscoped call answered %s", text(r))
	}
	_ = c.Close()
	_ = bob.Close()
	// SIGTERM flushes the exporters.
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}

	var calls []map[string]string
	var names []string
	for _, sp := range col.Spans() {
		if strings.HasPrefix(sp.GetName(), "tools/call") {
			calls = append(calls, telemetrytest.AttrMap(sp.GetAttributes()))
			names = append(names, sp.GetName()+" "+sp.GetStatus().GetCode().String())
		}
	}
	want := []string{"tools/call calculate STATUS_CODE_OK", "tools/call calculate STATUS_CODE_ERROR", "tools/call calculate STATUS_CODE_ERROR"}
	if !slices.Equal(names, want) {
		t.Fatalf("tool spans = %q, want %q", names, want)
	}
	ids := map[string]bool{}
	for i, a := range calls {
		if a["mcp.method.name"] != "tools/call" || a["gen_ai.tool.name"] != "calculate" || a["mcp.protocol.version"] == "" ||
			a["jsonrpc.request.id"] == "" {
			t.Errorf("span %d attributes = %v", i, a)
		}
		if i < 2 { // alice's two calls, on one client
			ids[a["jsonrpc.request.id"]] = true
		}
		wantErr := map[int]string{1: "tool_error", 2: "tool_error"}[i]
		if a["error.type"] != wantErr {
			t.Errorf("span %d error.type = %q, want %q", i, a["error.type"], wantErr)
		}
	}
	if len(ids) != 2 {
		t.Errorf("request ids are not distinct: %v", ids)
	}
	if calls[2]["refusal"] != "unknown" || calls[2]["status"] != "refused" {
		t.Errorf("refused span attributes = %v", calls[2])
	}

	// The histogram: one sample per call, by outcome; and the refusal
	// counter by guard stage.
	durations := map[string]uint64{}
	refusals := map[string]int64{}
	for _, r := range col.Requests() {
		for _, rm := range r.Metrics.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					switch m.GetName() {
					case "mcp.server.operation.duration":
						if m.GetUnit() != "s" {
							t.Errorf("duration unit = %q", m.GetUnit())
						}
						for _, dp := range m.GetHistogram().GetDataPoints() {
							a := telemetrytest.AttrMap(dp.GetAttributes())
							if a["mcp.method.name"] != "tools/call" || a["gen_ai.tool.name"] != "calculate" || a["mcp.protocol.version"] == "" {
								t.Errorf("duration data point attributes = %v", a)
							}
							durations[a["error.type"]] += dp.GetCount()
						}
					case "arrowhead.refusals":
						for _, dp := range m.GetSum().GetDataPoints() {
							refusals[telemetrytest.AttrMap(dp.GetAttributes())["refusal"]] += dp.GetAsInt()
						}
					}
				}
			}
		}
	}
	// Cumulative temporality: the last export holds the totals, earlier
	// ones a prefix; the final flush comes last.
	if durations[""] < 1 || durations["tool_error"] < 2 {
		t.Errorf("duration samples by error.type = %v, want at least 1 ok and 2 tool_error", durations)
	}
	if refusals["unknown"] < 1 {
		t.Errorf("refusals by kind = %v, want the scope refusal", refusals)
	}
}
