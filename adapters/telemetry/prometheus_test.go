package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/telemetry/telemetrytest"
)

// Prometheus names of the call metrics, as the OpenTelemetry exporter
// translates MetricCalls and MetricRefusals ({call}, counters) and
// MetricDuration (s).
const (
	promCalls    = "arrowhead_calls_total"
	promRefusals = "arrowhead_refusals_total"
	promDuration = "mcp_server_operation_duration_seconds"
)

// TestPrometheusScrape runs the probe calls with only Prometheus on and
// scrapes the handler: both metrics under their Prometheus names, one
// sample per call by name and status, and nothing of the canary.
func TestPrometheusScrape(t *testing.T) {
	ctx := context.Background()
	tel, err := Setup(ctx, Config{Prometheus: true, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(ctx) })
	if tel.Enabled() || tel.LoggerProvider() != nil {
		t.Fatal("Prometheus alone turned OTLP export on")
	}
	srv := httptest.NewServer(tel.MetricsHandler())
	t.Cleanup(srv.Close)

	app := newProbeApp(t, NewAuditSink(io.Discard), tel.Tracer(), tel.Metrics())
	calls := probeCalls()
	for _, c := range calls {
		c.run(ctx, app, traceOpt())
	}
	families, err := telemetrytest.Scrape(srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{promCalls, promRefusals, promDuration} {
		if families[name] == nil {
			t.Fatalf("no %s in the scrape (got %d families)", name, len(families))
		}
	}
	if n := telemetrytest.Count(families[promCalls], nil); n != float64(len(calls)) {
		t.Errorf("%s counts %v calls, want %d", promCalls, n, len(calls))
	}
	if n := telemetrytest.Count(families[promDuration], nil); n != float64(len(calls)) {
		t.Errorf("%s counts %v calls, want %d", promDuration, n, len(calls))
	}
	calls64, refusals, tools := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, c := range calls {
		calls64[c.comp+"/"+c.status]++
		if c.status != "ok" {
			refusals[c.comp+"/"+c.refusal]++
		}
		if c.kind == "tool" {
			tools[c.comp]++
		}
	}
	for key, n := range calls64 {
		comp, status, _ := strings.Cut(key, "/")
		if got := telemetrytest.Count(families[promCalls], map[string]string{AttrName: comp, AttrStatus: status}); got != n {
			t.Errorf("%s{name=%q,status=%q} = %v, want %v", promCalls, comp, status, got, n)
		}
	}
	for key, n := range refusals {
		comp, refusal, _ := strings.Cut(key, "/")
		if got := telemetrytest.Count(families[promRefusals], map[string]string{AttrName: comp, AttrRefusal: refusal}); got != n {
			t.Errorf("%s{name=%q,refusal=%q} = %v, want %v", promRefusals, comp, refusal, got, n)
		}
	}
	for comp, n := range tools {
		match := map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": comp}
		if got := telemetrytest.Count(families[promDuration], match); got != n {
			t.Errorf("%s%v = %v, want %v", promDuration, match, got, n)
		}
	}

	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("scrape answered %s, %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	if strings.Contains(string(body), "CANARY") {
		t.Error("the canary reached the scrape")
	}
}

func TestNoPrometheusNoHandler(t *testing.T) {
	tel, err := Setup(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if tel.MetricsHandler() != nil {
		t.Error("a scrape handler without Prometheus")
	}
}
