package wire_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// loopbackResolver answers every name with 127.0.0.1, as a rebinding DNS
// server would.
type loopbackResolver struct{}

func (loopbackResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// TestNotifyAllowlistedLoopbackReceivesNothing runs notify_webhook through
// the real egress adapter: naming a loopback or private destination in the
// allowlist does not make it reachable.
func TestNotifyAllowlistedLoopbackReceivesNothing(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	env := map[string]string{"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_JAIL_ROOT": t.TempDir(), "ARROWHEAD_DOCS_ROOT": t.TempDir(),
		"ARROWHEAD_DATA_DIR":         t.TempDir(),
		"ARROWHEAD_NOTIFY_ALLOWLIST": "http://127.0.0.1:" + port + "/hook,http://hooks.test:" + port + "/hook",
	}
	s := coretest.Settings(t, env)
	rt, err := wire.Build(t.Context(), s, wire.Options{AuditWriter: io.Discard, Resolver: loopbackResolver{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	for _, target := range []string{"http://127.0.0.1:" + port + "/hook", "http://hooks.test:" + port + "/hook/x"} {
		_, err := rt.App.Call(t.Context(), ports.Operator(), "notify_webhook", map[string]any{"url": target, "payload": map[string]any{"a": 1}})
		te, ok := catalog.AsToolError(err)
		if !ok || te.Kind != catalog.KindValidation || !strings.Contains(te.Message, "non-public") {
			t.Fatalf("%s: want a non-public refusal, got %v", target, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback receiver got %d requests", n)
	}
}

func TestNotifyRefusesMalformedAllowlistAtStartup(t *testing.T) {
	env := map[string]string{"ARROWHEAD_NOTIFY_ALLOWLIST": "https://ok.example/,https://user@bad.example/"}
	_, err := settings.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err == nil || !strings.Contains(err.Error(), "ARROWHEAD_NOTIFY_ALLOWLIST") || strings.Contains(err.Error(), "bad.example") {
		t.Fatalf("want a start-up refusal naming the variable and not the entry, got %v", err)
	}
	env = map[string]string{"ARROWHEAD_NOTIFY_SIGNING_SECRET": "not-a-secret"}
	_, err = settings.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err == nil || !strings.Contains(err.Error(), "ARROWHEAD_NOTIFY_SIGNING_SECRET") || strings.Contains(err.Error(), "not-a-secret") {
		t.Fatalf("want a start-up refusal naming the variable, got %v", err)
	}
}
