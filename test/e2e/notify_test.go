package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// TestNotifyOverStdio runs notify_webhook through the built binary on both
// protocol legs: gated off without an allowlist, listed with one, and an
// allowlisted destination on loopback still receives nothing.
func TestNotifyOverStdio(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			c, _ := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "docs"}, leg.opts...)
			if slices.Contains(toolNames(t, c), "notify_webhook") {
				t.Fatal("notify_webhook is listed without an allowlist")
			}
			c, _ = startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "docs",
				"ARROWHEAD_NOTIFY_ALLOWLIST":      srv.URL + "/hook",
				"ARROWHEAD_NOTIFY_SIGNING_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			}, leg.opts...)
			if !slices.Contains(toolNames(t, c), "notify_webhook") {
				t.Fatal("notify_webhook is not listed with an allowlist")
			}
			r := call(t, c, "notify_webhook", map[string]any{"url": srv.URL + "/hook/x", "payload": map[string]any{"text": "done"}})
			if !r.IsError || !strings.Contains(text(r), "non-public") || strings.Contains(text(r), u.Host) {
				t.Fatalf("allowlisted loopback: %s", text(r))
			}
			r = call(t, c, "notify_webhook", map[string]any{"url": "https://elsewhere.example/hook", "payload": map[string]any{}})
			if !r.IsError || !strings.Contains(text(r), "ARROWHEAD_NOTIFY_ALLOWLIST") || strings.Contains(text(r), "elsewhere") {
				t.Fatalf("not allowlisted: %s", text(r))
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback receiver got %d requests", n)
	}
}
