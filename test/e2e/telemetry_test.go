package e2e

import (
	"bytes"
	"encoding/hex"
	"net/http/httptest"
	"strings"
	"testing"

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
	// The local audit lines are still written, without the canary.
	if n := strings.Count(stderr.String(), `"msg":"audit"`); n < 3 || strings.Contains(stderr.String(), canary) {
		t.Errorf("stderr has %d audit lines (canary present: %v)", n, strings.Contains(stderr.String(), canary))
	}
}
