package vectorindex

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

func TestTokenize(t *testing.T) {
	for in, want := range map[string]map[string]uint32{
		"The Refund window is 30 days.":              {"refund": 1, "window": 1, "30": 1, "day": 1},
		"refunds REFUNDS refund":                     {"refund": 3},
		"naïve café, Straße!":                        {"naïve": 1, "café": 1, "straße": 1},
		"policies boxes class bus":                   {"policy": 1, "boxe": 1, "class": 1, "bus": 1},
		"a an the of":                                {},
		"snake_case-and.dots/x":                      {"snake": 1, "case": 1, "dot": 1, "x": 1},
		strings.Repeat("z", maxTokenBytes+1) + " ok": {"ok": 1},
		"": {},
	} {
		got, n := tokenize(in)
		if !maps.Equal(got, want) {
			t.Errorf("tokenize(%q) = %v, want %v", in, got, want)
		}
		total := 0
		for _, c := range want {
			total += int(c)
		}
		if n != total {
			t.Errorf("tokenize(%q) counted %d tokens, want %d", in, n, total)
		}
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"queries": "query", "zebras": "zebra", "boxes": "boxe", "glass": "glass", "status": "status",
		"bus": "bus", "its": "its", "toes": "toe", "trees": "tree", "aies": "aie", "x": "x",
	} {
		if got := fold(in); got != want {
			t.Errorf("fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func internalIndex(t *testing.T) *VectorIndex {
	t.Helper()
	x, err := OpenVectorIndex(context.Background(), VectorIndexConfig{Collections: []string{"c"}, Dimensions: 4, MaxK: 50})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestBM25PrefersShorterAndDenserChunks(t *testing.T) {
	x := internalIndex(t)
	ctx := context.Background()
	mk := func(id, content string) ports.Chunk {
		return ports.Chunk{ID: id, Tenant: "t", Source: id, Content: content, Embedding: []float32{1, 0, 0, 0}}
	}
	err := x.Upsert(ctx, "c", []ports.Chunk{
		mk("long", "otter alpha bravo charlie delta echo foxtrot golf hotel india"),
		mk("short", "otter alpha"),
		mk("dense", "otter otter otter alpha bravo charlie delta echo foxtrot golf"),
		mk("none", "alpha bravo"),
	})
	if err != nil {
		t.Fatal(err)
	}
	c := x.collections["c"]
	tn := c.tenants["t"]
	got := tn.keyword("otter", 10)
	var order []string
	for _, s := range got {
		order = append(order, tn.chunks[s.slot].id)
	}
	if !slices.Equal(order, []string{"dense", "short", "long"}) {
		t.Errorf("BM25 order = %v", order)
	}
	if got := tn.keyword("otter", 2); len(got) != 2 {
		t.Errorf("keyword n=2 returned %d", len(got))
	}
}

func TestPostingsAreRebuiltAfterChurn(t *testing.T) {
	x := internalIndex(t)
	ctx := context.Background()
	words := make([]string, 200)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	content := strings.Join(words, " ")
	for i := range 400 {
		c := ports.Chunk{ID: "one", Tenant: "t", Source: "s", Content: fmt.Sprintf("%s gen%d", content, i), Embedding: []float32{1, 0, 0, 0}}
		if err := x.Upsert(ctx, "c", []ports.Chunk{c}); err != nil {
			t.Fatal(err)
		}
	}
	tn := x.collections["c"].tenants["t"]
	if tn.nPosting > 2*minStalePostings {
		t.Errorf("%d postings for one live chunk of 201 terms: stale postings were not dropped", tn.nPosting)
	}
	if tn.live != 1 || len(tn.chunks) != 1 {
		t.Errorf("live=%d slots=%d, want one reused slot", tn.live, len(tn.chunks))
	}
	if got := tn.keyword("gen399 w7", 5); len(got) != 1 {
		t.Errorf("current content not found: %v", got)
	}
	if got := tn.keyword("gen398", 5); len(got) != 0 {
		t.Errorf("replaced content still found: %v", got)
	}
}

func TestCollectionBytesLimit(t *testing.T) {
	x := internalIndex(t)
	c := x.collections["c"]
	c.contentBytes = MaxVectorCollectionBytes - 3
	ctx := context.Background()
	mk := func(id, content string) ports.Chunk {
		return ports.Chunk{ID: id, Tenant: "t", Source: id, Content: content, Embedding: []float32{0, 1, 0, 0}}
	}
	if err := x.Upsert(ctx, "c", []ports.Chunk{mk("a", "abc")}); err != nil {
		t.Fatalf("up to the limit: %v", err)
	}
	err := x.Upsert(ctx, "c", []ports.Chunk{mk("b", "d")})
	if ve, ok := err.(*ports.VectorError); !ok || ve.Kind != ports.VectorLimit {
		t.Fatalf("past the limit: %v", err)
	}
	// Replacing with shorter content frees room.
	if err := x.Upsert(ctx, "c", []ports.Chunk{mk("a", "a"), mk("b", "d")}); err != nil {
		t.Errorf("replace then add: %v", err)
	}
}
