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
// translates MetricCalls ({call}, a counter) and MetricDuration (s).
const (
	promCalls    = "arrowhead_calls_total"
	promDuration = "arrowhead_call_duration_seconds"
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
	for _, name := range []string{promCalls, promDuration} {
		f := families[name]
		if f == nil {
			t.Fatalf("no %s in the scrape (got %d families)", name, len(families))
		}
		if n := telemetrytest.Count(f, nil); n != float64(len(calls)) {
			t.Errorf("%s counts %v calls, want %d", name, n, len(calls))
		}
		want := map[string]float64{}
		for _, c := range calls {
			want[c.comp+"/"+c.status]++
		}
		for key, n := range want {
			comp, status, _ := strings.Cut(key, "/")
			if got := telemetrytest.Count(f, map[string]string{AttrName: comp, AttrStatus: status}); got != n {
				t.Errorf("%s{name=%q,status=%q} = %v, want %v", name, comp, status, got, n)
			}
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
