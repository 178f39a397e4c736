package wire_test

import (
	"context"
	"io"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
)

// BenchmarkBuild is the assembly a stdio server does at each start with the
// default (full) profile, on a data directory an earlier start created:
// the part of start-up between the settings and the transport
// (test/e2e BenchmarkStdioStartup measures the whole of it).
func BenchmarkBuild(b *testing.B) {
	dir := b.TempDir()
	env := map[string]string{"ARROWHEAD_JAIL_ROOT": dir, "ARROWHEAD_DOCS_ROOT": dir + "/documents", "ARROWHEAD_DATA_DIR": dir + "/data"}
	s := coretest.Settings(b, env)
	build := func() {
		rt, err := wire.Build(context.Background(), s, wire.Options{AuditWriter: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		if err := rt.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	build() // creates the data directory's store, as the first start does
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		build()
	}
}
