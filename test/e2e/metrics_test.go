package e2e

import (
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/telemetry/telemetrytest"
)

// TestPrometheusScrapeOverLoopback serves HTTP with ARROWHEAD_METRICS_ADDR
// on a loopback port and scrapes it as Prometheus would: the call metrics
// are there, a call increments the counter, and the public listener does
// not serve /metrics.
func TestPrometheusScrapeOverLoopback(t *testing.T) {
	metricsURL := "http://127.0.0.1:" + strconv.Itoa(freePort(t)) + "/metrics"
	s := startHTTP(t, map[string]string{
		"ARROWHEAD_PROFILE":      "core",
		"ARROWHEAD_METRICS_ADDR": strings.TrimSuffix(strings.TrimPrefix(metricsURL, "http://"), "/metrics"),
	})
	c := s.connect(t, s.token(t, "alice", "tools:read"))
	ok := map[string]string{"name": "calculate", "status": "ok", "component": "tool"}

	before, err := telemetrytest.Scrape(http.DefaultClient, metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	if r := call(t, c, "calculate", map[string]any{"expression": "6 * 7"}); r.IsError {
		t.Fatalf("calculate: %s", text(r))
	}
	after, err := telemetrytest.Scrape(http.DefaultClient, metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	semconv := map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": "calculate"}
	for name, match := range map[string]map[string]string{"arrowhead_calls_total": ok, "mcp_server_operation_duration_seconds": semconv} {
		if after[name] == nil {
			t.Fatalf("the scrape has no %s", name)
		}
		if d := telemetrytest.Count(after[name], match) - telemetrytest.Count(before[name], match); d != 1 {
			t.Errorf("%s%v rose by %v over one call, want 1", name, match, d)
		}
	}

	// The public listener has no /metrics, with or without a token.
	for _, auth := range []string{"", "Bearer " + s.token(t, "alice", "tools:read")} {
		req, _ := http.NewRequest(http.MethodGet, s.url+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(body), "arrowhead_calls") {
			t.Errorf("the public listener served /metrics (%s): %.200s", resp.Status, body)
		}
	}
}

// TestMetricsAddrRefusals: a malformed or unusable ARROWHEAD_METRICS_ADDR
// stops start-up with a line naming the variable.
func TestMetricsAddrRefusals(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, addr := range []string{"not-an-address", "127.0.0.1:99999", busy.Addr().String()} {
		dir := t.TempDir()
		cmd := exec.Command(binary)
		cmd.Env = baseEnv(t, dir, map[string]string{"ARROWHEAD_METRICS_ADDR": addr})
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "ARROWHEAD_METRICS_ADDR") {
			t.Errorf("ARROWHEAD_METRICS_ADDR=%s: err %v, output %q", addr, err, out)
		}
	}
}
