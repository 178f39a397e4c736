package integration_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/redis"
	"github.com/arrowhead-go/arrowhead/adapters/telemetry"
	"github.com/arrowhead-go/arrowhead/adapters/telemetry/telemetrytest"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

func redisBoard(t *testing.T, url string) ports.KillBoard {
	t.Helper()
	client, err := redis.NewClientFromURL(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	b, err := redis.NewKillBoard(client, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRedisKillBoardContract(t *testing.T) {
	portstest.KillBoardContract(t, func(t *testing.T) (ports.KillBoard, ports.KillBoard) {
		url, _ := startRedis(t)
		return redisBoard(t, url), redisBoard(t, url)
	})
}

// TestRedisKillBoardReloadsAfterReconnecting restarts Redis under a
// watcher: when it is back, the watcher is called again (so its replica
// reloads what changed while it was cut off) without an announcement of
// its own.
func TestRedisKillBoardReloadsAfterReconnecting(t *testing.T) {
	srv := startRedisServer(t)
	b := redisBoard(t, srv.URL())
	var heard atomic.Int32
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); b.Watch(ctx, func() { heard.Add(1) }) }()
	t.Cleanup(func() { cancel(); <-done })
	wait := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s did not happen", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	wait("the first call", func() bool { return heard.Load() > 0 })
	srv.Stop()
	before := heard.Load()
	srv.Restart()
	// A rule written straight into the restarted Redis (another replica
	// threw it while this one was cut off: no announcement reaches us).
	other := redisBoard(t, srv.URL())
	if err := other.Throw(t.Context(), ports.KillRule{ID: "while-away", Tool: "safe_fetch", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	wait("the call after reconnecting", func() bool { return heard.Load() > before })
	rules, err := b.List(t.Context())
	if err != nil || len(rules) != 1 || rules[0].ID != "while-away" {
		t.Fatalf("after reconnecting: %+v %v", rules, err)
	}
}

// TestKillCommandAuditsThroughTheConfiguredSink: the runtime `arrowhead
// kill` uses audits a throw and a lift as a server does: a JSON line on
// its audit writer and, with OpenTelemetry export configured, an audit log
// record at the deployment's collector, flushed when the command ends.
func TestKillCommandAuditsThroughTheConfiguredSink(t *testing.T) {
	url, _ := startRedis(t)
	col := &telemetrytest.Collector{}
	srv := httptest.NewServer(col)
	t.Cleanup(srv.Close)
	s := coretest.Settings(t, map[string]string{"ARROWHEAD_DATA_DIR": t.TempDir(), "ARROWHEAD_REDIS_URL": url, "ARROWHEAD_OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL})
	var lines bytes.Buffer
	ctx := context.Background()
	rt, err := wire.KillSwitch(ctx, s, &lines)
	if err != nil {
		t.Fatal(err)
	}
	by := ports.Principal{Subject: "ops-cli", Authenticated: true}
	rule, err := rt.App.ThrowKill(ctx, by, ports.KillRule{Tool: "calculate", Reason: "audit test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.App.LiftKill(ctx, by, rule.ID); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(lines.String(), `"component":"killswitch"`); n != 2 {
		t.Errorf("%d audit lines on the writer:\n%s", n, lines.String())
	}
	var names []string
	for _, r := range col.LogRecords() {
		a := telemetrytest.AttrMap(r.GetAttributes())
		if r.GetBody().GetStringValue() == telemetry.AuditMessage && a[telemetry.FieldComponent] == "killswitch" && a["subject"] == "ops-cli" {
			names = append(names, a[telemetry.FieldName])
		}
	}
	if !slices.Equal(names, []string{"throw", "lift"}) {
		t.Fatalf("audit records at the collector: %v (of %d records)", names, len(col.LogRecords()))
	}
}
