package memorytools_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/embed"
	"github.com/arrowhead-go/arrowhead/core/tools/memorytools"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// recorder is a memory backend that keeps what the family sent it: the
// embeddings are the point here, the storing is the contract suite's.
type recorder struct {
	ports.MemoryBackend
	stored, queried []float32
	stores          int
}

func (r *recorder) Store(_ context.Context, _ string, w ports.MemoryWrite, _ ports.MemoryLimits) (ports.MemoryRecord, bool, error) {
	r.stores++
	r.stored = w.Embedding
	return ports.MemoryRecord{Namespace: w.Namespace, ID: w.NewID, Content: w.Content, Provenance: w.Provenance}, true, nil
}

func (r *recorder) Search(_ context.Context, _, _, _ string, embedding []float32, _ int) ([]ports.MemoryHit, ports.Recall, error) {
	r.queried = embedding
	if embedding != nil {
		return nil, ports.RecallSemantic, nil
	}
	return nil, ports.RecallKeyword, nil
}

// failing is an embedder whose provider is down.
type failing struct{ *embed.Deterministic }

func (failing) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("provider down: key sk-secret")
}

func newApp(t *testing.T, backend ports.MemoryBackend, e ports.Embedder) *core.App {
	t.Helper()
	s := coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_RATE_LIMIT_ENABLED": "false"})
	clock := &portstest.Clock{T: time.Unix(1700000000, 0)}
	app, err := core.New(core.Deps{Settings: s, Authorizer: portstest.AllowAll{}, Rates: &portstest.Counter{}, Audit: &portstest.Audit{},
		Tracer: nop.Tracer{}, Metrics: nop.Metrics{}, Clock: clock,
		Families: []core.Member{memorytools.Family.With(memorytools.Ports{Memory: backend, Embedder: e, Authorizer: portstest.AllowAll{}, Clock: clock})}})
	if err != nil {
		t.Fatal(err)
	}
	return app
}

var alice = ports.NewPrincipal("alice", "memory:read", "memory:write")

// TestEmbedsOnlyWithAnEmbedder: given an embedder, the family embeds the
// content it stores and the query it recalls by, and passes the backend's
// recall label through; without one it sends no embedding at all.
func TestEmbedsOnlyWithAnEmbedder(t *testing.T) {
	e := embed.NewDeterministic(8)
	want := func(text string) []float32 {
		v, err := e.Embed(t.Context(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		return v[0]
	}
	for _, withEmbedder := range []bool{true, false} {
		rec := &recorder{}
		var given ports.Embedder
		if withEmbedder {
			given = e
		}
		app := newApp(t, rec, given)
		if _, te := coretest.Call(t, app, alice, "memory_store", map[string]any{"namespace": "n", "content": "prefers metric units"}); te != nil {
			t.Fatal(te)
		}
		res, te := coretest.Call(t, app, alice, "memory_search", map[string]any{"namespace": "n", "query": "units"})
		if te != nil {
			t.Fatal(te)
		}
		recall := res.Structured()["recall"]
		if withEmbedder {
			if !slices.Equal(rec.stored, want("prefers metric units")) || !slices.Equal(rec.queried, want("units")) || recall != "semantic" {
				t.Errorf("with an embedder: stored %v, queried %v, recall %v", rec.stored, rec.queried, recall)
			}
		} else if rec.stored != nil || rec.queried != nil || recall != "keyword" {
			t.Errorf("without an embedder: stored %v, queried %v, recall %v", rec.stored, rec.queried, recall)
		}
	}
}

// TestEmbedderFailureRefusesTheWrite: a write whose embedding fails is
// refused before it reaches the backend, without the provider's text.
func TestEmbedderFailureRefusesTheWrite(t *testing.T) {
	rec := &recorder{}
	app := newApp(t, rec, failing{embed.NewDeterministic(8)})
	_, te := coretest.Call(t, app, alice, "memory_store", map[string]any{"namespace": "n", "content": "x"})
	if te == nil || te.Kind != catalog.KindFailed || rec.stores != 0 {
		t.Fatalf("refusal %v, stores %d", te, rec.stores)
	}
	if msg := te.Error(); msg == "" || strings.Contains(msg, "sk-secret") || strings.Contains(msg, "provider down") {
		t.Fatalf("refusal text %q", msg)
	}
}

// stalled is a memory backend whose every kv write fails with err.
type stalled struct {
	ports.MemoryBackend
	err error
}

func (s stalled) KVSet(context.Context, string, ports.KVEntry, ports.MemoryLimits) error {
	return s.err
}

// TestStoreFaultsGetTheStoresRefusal: a store that timed out or lost its
// commit answers with the memory store's refusal, never the boundary's
// "Internal error", and an unknown outcome says so and that repeating is
// safe.
func TestStoreFaultsGetTheStoresRefusal(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("setting a key: %w", context.DeadlineExceeded), "did not answer in time"},
		{fmt.Errorf("setting a key: %w", ports.ErrOutcomeUnknown), "may or may not have been applied"},
	} {
		app := newApp(t, stalled{err: tc.err}, nil)
		_, te := coretest.Call(t, app, alice, "kv_set", map[string]any{"key": "k", "value": "v"})
		if te == nil || te.Kind != catalog.KindUnavailable || !strings.Contains(te.Message, "The memory store") || !strings.Contains(te.Message, tc.want) {
			t.Fatalf("%v answered %+v", tc.err, te)
		}
		if errors.Is(tc.err, ports.ErrOutcomeUnknown) && (!strings.Contains(te.Message, "kv_set sets the same value again") || te.Data["outcome"] != "unknown") {
			t.Fatalf("an unknown outcome does not say how to repeat it: %+v", te)
		}
	}
}

// cutList is a memory backend whose listing is cut at its limit.
type cutList struct{ ports.MemoryBackend }

func (cutList) List(_ context.Context, _, ns string, _ int) ([]ports.MemoryRecord, bool, error) {
	return []ports.MemoryRecord{{Namespace: ns, ID: "m1", Content: "one"}}, true, nil
}

// TestMemoryListSaysWhenItIsCut: a listing the backend cut says so in the
// text the model reads, not only in the structured result.
func TestMemoryListSaysWhenItIsCut(t *testing.T) {
	res, err := newApp(t, cutList{}, nil).Call(t.Context(), alice, "memory_list", map[string]any{"namespace": "notes"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Structured()["truncated"] != true || !strings.HasPrefix(res.Text, "1 memory in notes:\n") ||
		!strings.HasSuffix(res.Text, "More memories exist in this namespace than are listed.\n") {
		t.Fatalf("text %q", res.Text)
	}
}
