package wire_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// A data directory written by the previous release (memories and kv in
// the bbolt file) is imported on the first start: the tools read what was
// stored before the upgrade.
func TestFirstStartImportsThePreviousStore(t *testing.T) {
	dir := t.TempDir()
	old, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := old.Namespace(boltstores.MemoryNamespace)
	if err != nil {
		t.Fatal(err)
	}
	owner := ports.Operator().Subject
	now := time.Now()
	if err := boltstores.NewMemoryStore(ns).KVSet(context.Background(), owner, ports.KVEntry{Key: "before", Value: "the upgrade", UpdatedAt: now,
		Provenance: ports.Provenance{Tool: "kv_set", Caller: owner, At: now}}, ports.MemoryLimits{}); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s := coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_JAIL_ROOT": t.TempDir(),
		"ARROWHEAD_DOCS_ROOT": t.TempDir(), "ARROWHEAD_DATA_DIR": dir})
	rt, err := wire.Build(t.Context(), s, wire.Options{AuditWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	res, err := rt.App.Call(t.Context(), ports.Operator(), "kv_get", map[string]any{"key": "before"})
	if err != nil {
		t.Fatalf("kv_get: %+v %v", res, err)
	}
	// The value comes back framed as untrusted data.
	if v, _ := res.Structured()["content"].(string); !strings.Contains(v, "\nthe upgrade\n") {
		t.Fatalf("kv_get after the import = %+v", res.Structured())
	}
}
