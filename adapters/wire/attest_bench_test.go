package wire_test

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"testing"
	"time"

	mcpadapter "github.com/arrowhead-go/arrowhead/adapters/mcp"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// BenchmarkToolsList is one tools/list through mcp-go and the adapter's
// filter (which stamps the caller's manifest digest into _meta), on the
// full profile's catalog; it reports the median besides the mean.
func BenchmarkToolsList(b *testing.B) {
	env := map[string]string{"ARROWHEAD_PROFILE": "full", "ARROWHEAD_JAIL_ROOT": b.TempDir(),
		"ARROWHEAD_DOCS_ROOT": b.TempDir(), "ARROWHEAD_DATA_DIR": b.TempDir(), "ARROWHEAD_MEMORY_ROOT": b.TempDir()}
	rt, err := wire.Build(context.Background(), coretest.Settings(b, env), wire.Options{AuditWriter: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close(context.Background()) })
	p := ports.NewPrincipal("bench", "tools:read", "docs:read", "docs:write", "memory:read", "memory:write")
	srv := mcpadapter.New(rt.App, mcpadapter.Options{Name: "arrowhead", Version: "b",
		Principal: func(context.Context) ports.Principal { return p }})
	msg := json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	ctx := context.Background()
	if out, _ := json.Marshal(srv.MCPServer().HandleMessage(ctx, msg)); len(out) < 1000 {
		b.Fatalf("tools/list answered %s", out)
	}
	durations := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		// Marshalled, as the transport does, so the _meta is paid for.
		_, _ = json.Marshal(srv.MCPServer().HandleMessage(ctx, msg))
		if len(durations) < cap(durations) {
			durations = append(durations, time.Since(start))
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	if len(durations) > 0 {
		b.ReportMetric(float64(durations[len(durations)/2].Nanoseconds()), "p50-ns")
	}
}
