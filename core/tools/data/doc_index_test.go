package data_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/tools/data"
	"github.com/arrowhead-go/arrowhead/ports"
)

// recordingWriter counts the Upsert calls doc_index makes and the chunks
// each carried. With perDocument set it writes each source's chunks in a
// separate Upsert, which is what doc_index did before it batched documents.
type recordingWriter struct {
	ports.VectorWriter
	perDocument bool
	failUpsert  bool

	mu    sync.Mutex
	sizes []int
}

func (w *recordingWriter) Upsert(ctx context.Context, collection string, chunks []ports.Chunk) error {
	w.mu.Lock()
	w.sizes = append(w.sizes, len(chunks))
	w.mu.Unlock()
	if w.failUpsert {
		return &ports.VectorError{Kind: ports.VectorUnavailable, Err: errors.New("injected")}
	}
	if !w.perDocument {
		return w.VectorWriter.Upsert(ctx, collection, chunks)
	}
	for start := 0; start < len(chunks); {
		end := start
		for end < len(chunks) && chunks[end].Source == chunks[start].Source {
			end++
		}
		if err := w.VectorWriter.Upsert(ctx, collection, chunks[start:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// indexCorpus is documents documents of about 20 chunks each (at the test
// environment's 200-character chunks).
func indexCorpus(documents int) map[string]string {
	files := map[string]string{}
	for d := 0; d < documents; d++ {
		var sb strings.Builder
		fmt.Fprintf(&sb, "# Document %d\n\n", d)
		for line := 0; line < 80; line++ {
			fmt.Fprintf(&sb, "Document %d line %d: refunds ship within %d days.\n", d, line, d+line)
		}
		files[fmt.Sprintf("handbook/doc%03d.md", d)] = sb.String()
	}
	return files
}

// storedIndex is everything alice's tenant holds: each source's chunk
// hashes, by index.
func storedIndex(t *testing.T, e env) map[string]map[int]string {
	t.Helper()
	sources, err := e.index.Sources(t.Context(), "doc_chunks", "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[int]string{}
	for _, src := range sources {
		if out[src], err = e.index.Hashes(t.Context(), "doc_chunks", "alice", src); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestDocIndexBatchesDocumentsIntoFewUpserts(t *testing.T) {
	const documents = 120
	files := indexCorpus(documents)
	batched := &recordingWriter{}
	single := &recordingWriter{perDocument: true}
	envs := []env{
		newEnvWriting(t, policy, files, func(w ports.VectorWriter) ports.VectorWriter { batched.VectorWriter = w; return batched }),
		newEnvWriting(t, policy, files, func(w ports.VectorWriter) ports.VectorWriter { single.VectorWriter = w; return single }),
	}
	index := func(e env) map[string]any {
		t.Helper()
		res, te := coretest.Call(t, e.app, alice, "doc_index", map[string]any{"collection": "doc_chunks"})
		if te != nil {
			t.Fatal(te)
		}
		return res.Structured()
	}
	compare := func(stage string) {
		t.Helper()
		a, b := index(envs[0]), index(envs[1])
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: batched report %v, per-document report %v", stage, a, b)
		}
		if got, want := storedIndex(t, envs[0]), storedIndex(t, envs[1]); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the batched index holds %d sources, the per-document one %d, or their chunks differ", stage, len(got), len(want))
		}
		for _, q := range []string{"refunds ship within 40 days", "document 7 line 3"} {
			ra, _ := coretest.Call(t, envs[0].app, alice, "vector_query", map[string]any{"collection": "doc_chunks", "query": q, "k": 10})
			rb, _ := coretest.Call(t, envs[1].app, alice, "vector_query", map[string]any{"collection": "doc_chunks", "query": q, "k": 10})
			if hits, _ := ra.Structured()["results"].([]any); len(hits) == 0 {
				t.Fatalf("%s: nothing retrieved for %q", stage, q)
			}
			if !reflect.DeepEqual(ra.Structured()["results"], rb.Structured()["results"]) {
				t.Fatalf("%s: retrieval differs for %q", stage, q)
			}
		}
	}
	compare("first run")
	first := storedIndex(t, envs[0])
	total := 0
	for _, h := range first {
		total += len(h)
	}
	if len(first) != documents || total <= data.IndexWriteBatchChunks {
		t.Fatalf("the corpus indexed %d documents and %d chunks; the test needs more than one batch", len(first), total)
	}
	if len(batched.sizes) < 2 || len(batched.sizes) >= documents {
		t.Fatalf("%d documents took %d Upsert calls", documents, len(batched.sizes))
	}
	for _, n := range batched.sizes {
		if n > data.IndexWriteBatchChunks+data.IndexEmbedBatch {
			t.Fatalf("one Upsert carried %d chunks, past the batch bound", n)
		}
	}

	// Shrink one document, edit another, delete a third: the batched run
	// re-embeds, trims and removes exactly what per-document writes do.
	for _, e := range envs {
		coretest.WriteFiles(t, e.root, map[string]string{
			"handbook/doc003.md": "# Document 3\n\nNow short.",
			"handbook/doc005.md": files["handbook/doc005.md"] + "One more line at the end.\n",
		})
		if err := os.Remove(filepath.Join(e.root, "handbook", "doc007.md")); err != nil {
			t.Fatal(err)
		}
	}
	batched.sizes = nil
	compare("after edits")
	if len(batched.sizes) != 1 {
		t.Fatalf("two changed documents took %d Upsert calls", len(batched.sizes))
	}
	got := storedIndex(t, envs[0])
	if _, ok := got["handbook/doc007.md"]; ok || len(got["handbook/doc003.md"]) != 1 || len(got) != documents-1 {
		t.Fatalf("the edits were not applied: %d sources, doc003 has %d chunks", len(got), len(got["handbook/doc003.md"]))
	}
}

func TestDocIndexFailedWriteAcknowledgesNothing(t *testing.T) {
	failing := &recordingWriter{failUpsert: true}
	e := newEnvWriting(t, policy, indexCorpus(5), func(w ports.VectorWriter) ports.VectorWriter { failing.VectorWriter = w; return failing })
	res, te := coretest.Call(t, e.app, alice, "doc_index", map[string]any{"collection": "doc_chunks"})
	if te == nil || te.Kind != catalog.KindUnavailable {
		t.Fatalf("a failed write was answered with %v (%v)", res.Structured(), te)
	}
	if len(failing.sizes) != 1 {
		t.Fatalf("5 documents took %d Upsert calls", len(failing.sizes))
	}
	if got := storedIndex(t, e); len(got) != 0 {
		t.Fatalf("a failed write left %d sources stored", len(got))
	}
}
