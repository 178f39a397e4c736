package wire_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
)

func benchRuntime(b *testing.B) *wire.Runtime {
	b.Helper()
	env := map[string]string{"ARROWHEAD_PROFILE": "core", "ARROWHEAD_JAIL_ROOT": b.TempDir(),
		"ARROWHEAD_DOCS_ROOT": b.TempDir(), "ARROWHEAD_DATA_DIR": b.TempDir(), "ARROWHEAD_MEMORY_ROOT": b.TempDir(),
		"ARROWHEAD_CALCULATE_PER_MINUTE": "1000000"}
	s := coretest.Settings(b, env)
	rt, err := wire.Build(context.Background(), s, wire.Options{AuditWriter: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

// BenchmarkCallGuarded is calculate through the whole chain with the real
// adapters (zap audit line, memory rate store, no-op telemetry). core's
// BenchmarkCalculateHandlerOnly is the same tool's validation and handler
// without the chain; their difference is what the chain adds per call
// (budget: 15 µs).
func BenchmarkCallGuarded(b *testing.B) {
	rt := benchRuntime(b)
	p := ports.NewPrincipal("bench", "tools:read")
	args := json.RawMessage(`{"expression":"2 * (3 + 4)"}`)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rt.App.Call(ctx, p, "calculate", args); err != nil {
			b.Fatal(err)
		}
	}
}
