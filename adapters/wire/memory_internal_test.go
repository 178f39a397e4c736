package wire

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/core/embed"
	"github.com/arrowhead-go/arrowhead/ports"
)

// meaningful is an embedder that declares its vectors meaningful, as the
// http provider does.
type meaningful struct{ *embed.Deterministic }

func (meaningful) Semantic() bool { return true }

// TestMemoryEmbedderDecision: memories are embedded, and recalled
// semantically, only when the backend ranks embeddings and the embedder's
// vectors carry meaning; every other combination is keyword recall.
func TestMemoryEmbedderDecision(t *testing.T) {
	for _, c := range []struct {
		name     string
		e        ports.Embedder
		semantic bool
		want     bool
	}{
		{"http embedder, pgvector", meaningful{embed.NewDeterministic(8)}, true, true},
		{"http embedder, plain PostgreSQL", meaningful{embed.NewDeterministic(8)}, false, false},
		{"deterministic embedder, pgvector", embed.NewDeterministic(8), true, false},
		{"deterministic embedder, plain PostgreSQL", embed.NewDeterministic(8), false, false},
		{"no embedder", nil, true, false},
	} {
		if got := memoryEmbedder(c.semantic, c.e) != nil; got != c.want {
			t.Errorf("%s: embedder given = %v, want %v", c.name, got, c.want)
		}
	}
}
