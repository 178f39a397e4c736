package wire_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/internal/tmpfs"
	"github.com/arrowhead-go/arrowhead/ports"
)

// storeHealth is the embedded store's readiness as /ready reports it.
func storeHealth(t *testing.T, rt *wire.Runtime) (ports.HealthState, string) {
	t.Helper()
	for _, h := range rt.Health {
		if h.Name() == sqlite.HealthName {
			return h.(ports.HealthExplainer).HealthReason(t.Context())
		}
	}
	t.Fatal("the embedded store is not among /ready's checks")
	return "", ""
}

// With ARROWHEAD_DATA_DIR on a small disk that fills (a 24 MiB tmpfs):
// /ready goes degraded under ARROWHEAD_DATA_MIN_FREE_BYTES and down, with
// the reason, once the disk is full; the tools refuse writes with the
// store's refusal (never "Internal error") and nothing refused is stored;
// kv_delete, memory_delete and clearing a working set still work, and once
// they have freed the space writes work again and /ready is ok.
func TestFullDiskThroughTheTools(t *testing.T) {
	data := tmpfs.Mount(t, "24m")
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "a.md"), []byte("# a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "full", "ARROWHEAD_JAIL_ROOT": t.TempDir(),
		"ARROWHEAD_DOCS_ROOT": docs, "ARROWHEAD_REPO_ROOT": t.TempDir(), "ARROWHEAD_DATA_DIR": data,
		"ARROWHEAD_DATA_MIN_FREE_BYTES": "6000000", "ARROWHEAD_KV_SET_PER_MINUTE": "100000", "ARROWHEAD_KV_DELETE_PER_MINUTE": "100000"})
	rt, err := wire.Build(t.Context(), s, wire.Options{AuditWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	op := ports.Operator()
	call := func(name string, args map[string]any) (catalog.Result, *catalog.ToolError) {
		t.Helper()
		res, err := rt.App.Call(t.Context(), op, name, args)
		if err != nil {
			te, _ := catalog.AsToolError(err)
			return res, te
		}
		return res, nil
	}
	mustCall := func(name string, args map[string]any) catalog.Result {
		t.Helper()
		res, te := call(name, args)
		if te != nil {
			t.Fatalf("%s: %s", name, te.Message)
		}
		return res
	}
	refusedFull := func(name string, te *catalog.ToolError) {
		t.Helper()
		if te == nil || te.Kind != catalog.KindUnavailable || !strings.Contains(te.Message, "disk is full: the change was not applied") {
			t.Fatalf("%s on a full disk = %+v, want the store's full-disk refusal", name, te)
		}
	}
	if st, why := storeHealth(t, rt); st != ports.HealthOK {
		t.Fatalf("health before = %s (%s)", st, why)
	}
	mustCall("workingset_update", map[string]any{"name": "bug", "action": "pin", "items": []map[string]any{{"kind": "doc", "identifier": "a.md"}}})
	stored := mustCall("memory_store", map[string]any{"namespace": "notes", "content": "kept across the full disk"})
	id, _ := stored.Structured()["id"].(string)

	value := strings.Repeat("v", 90000)
	var keys []string
	sawDegraded := false
	for i := 0; ; i++ {
		key := fmt.Sprint("fill", i)
		_, te := call("kv_set", map[string]any{"key": key, "value": value})
		if te != nil {
			refusedFull("kv_set", te)
			break
		}
		keys = append(keys, key)
		if st, _ := storeHealth(t, rt); st == ports.HealthDegraded {
			sawDegraded = true
		}
		if i > 1000 {
			t.Fatal("the disk never filled")
		}
	}
	if !sawDegraded {
		t.Error("/ready never said degraded on the way to a full disk")
	}
	if st, why := storeHealth(t, rt); st != ports.HealthDown || !strings.Contains(why, "disk is full") {
		t.Fatalf("health on a full disk = %s (%s), want down saying the disk is full", st, why)
	}
	_, te := call("memory_store", map[string]any{"namespace": "notes", "content": "refused"})
	refusedFull("memory_store", te)
	list := mustCall("memory_list", map[string]any{"namespace": "notes"})
	if mems := fmt.Sprint(list.Structured()["memories"]); strings.Count(mems, "id:") != 1 || !strings.Contains(mems, "id:"+id+" ") {
		t.Fatalf("memory_list on a full disk = %+v, want only the memory stored before", list.Structured())
	}

	mustCall("workingset_update", map[string]any{"name": "bug", "action": "clear"})
	mustCall("memory_delete", map[string]any{"namespace": "notes", "id": id})
	for _, k := range keys {
		mustCall("kv_delete", map[string]any{"key": k})
	}
	if st, why := storeHealth(t, rt); st != ports.HealthOK {
		t.Fatalf("health once the space is freed = %s (%s), want ok", st, why)
	}
	mustCall("kv_set", map[string]any{"key": "after", "value": "written again"})
	if got := mustCall("kv_get", map[string]any{"key": "after"}); !strings.Contains(fmt.Sprint(got.Structured()["content"]), "written again") {
		t.Fatalf("kv_get after = %+v", got.Structured())
	}
}
