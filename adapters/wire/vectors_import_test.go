package wire_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/embed"
	"github.com/arrowhead-go/arrowhead/ports"
)

// A data directory whose previous-release bbolt file holds an indexed
// document: the first start imports it, and vector_query finds it without
// doc_index running again.
func TestFirstStartImportsThePreviousVectorIndex(t *testing.T) {
	dir := t.TempDir()
	s := coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_JAIL_ROOT": t.TempDir(),
		"ARROWHEAD_DOCS_ROOT": t.TempDir(), "ARROWHEAD_REPO_ROOT": t.TempDir(), "ARROWHEAD_DATA_DIR": dir})
	content := "Customers may return unopened items within thirty days for a full refund."
	embs, err := embed.NewDeterministic(s.EmbeddingDimensions).Embed(context.Background(), []string{content})
	if err != nil {
		t.Fatal(err)
	}
	old, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := old.Namespace(boltstores.VectorNamespace)
	if err != nil {
		t.Fatal(err)
	}
	// The previous release's layout (adapters/bolt/boltstores/vectors_store.go).
	tenant := ports.Operator().Subject
	err = ns.Update(context.Background(), func(root *bbolt.Bucket) error {
		b, err := root.CreateBucket([]byte("doc_chunks"))
		if err != nil {
			return err
		}
		cb, err := b.CreateBucket([]byte("chunks"))
		if err != nil {
			return err
		}
		key := binary.BigEndian.AppendUint32([]byte(tenant+"\x00notes/refunds.md\x00"), 0)
		var v []byte
		for _, f := range []string{"chunk-1", "hash-1", content} {
			v = binary.LittleEndian.AppendUint32(v, uint32(len(f)))
			v = append(v, f...)
		}
		var norm float64
		for _, f := range embs[0] {
			norm += float64(f) * float64(f)
		}
		for _, f := range embs[0] {
			v = binary.LittleEndian.AppendUint32(v, math.Float32bits(float32(float64(f)/math.Sqrt(norm))))
		}
		if err := cb.Put(key, bolt.Seal(key, v)); err != nil {
			return err
		}
		meta := binary.LittleEndian.AppendUint32(nil, 1)
		meta = binary.LittleEndian.AppendUint32(meta, uint32(s.EmbeddingDimensions))
		meta = binary.LittleEndian.AppendUint64(meta, 1)
		return b.Put([]byte("meta"), bolt.Seal([]byte("meta"), meta))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	rt, err := wire.Build(t.Context(), s, wire.Options{AuditWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	res, err := rt.App.Call(t.Context(), ports.Operator(), "vector_query", map[string]any{"collection": "doc_chunks", "query": "refund within thirty days", "k": 1})
	if err != nil {
		t.Fatalf("vector_query: %+v %v", res, err)
	}
	body, _ := json.Marshal(res.Structured())
	if !strings.Contains(string(body), "notes/refunds.md") {
		t.Fatalf("vector_query after the import = %s", body)
	}
}

// TestImportReleasesThePreviousStore checks that the previous release's
// bbolt file is held only while it is imported: a server that has
// imported it leaves its lock free, so a second server process (or one
// that still has to import its tasks) is never refused by it.
func TestImportReleasesThePreviousStore(t *testing.T) {
	dir := t.TempDir()
	old, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	s := coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "full", "ARROWHEAD_JAIL_ROOT": t.TempDir(),
		"ARROWHEAD_DOCS_ROOT": t.TempDir(), "ARROWHEAD_REPO_ROOT": t.TempDir(), "ARROWHEAD_DATA_DIR": dir})
	rt, err := wire.Build(t.Context(), s, wire.Options{AuditWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	if _, err := rt.App.Call(t.Context(), ports.Operator(), "kv_set", map[string]any{"key": "k", "value": "v"}); err != nil {
		t.Fatalf("kv_set: %v", err)
	}
	again, err := bolt.Open(bolt.Config{Dir: dir, LockTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("the previous store is still locked by a running server: %v", err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}
