package wire

import (
	"context"
	"errors"
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/memorytools"
	"github.com/arrowhead-go/arrowhead/ports"
)

// openMemory opens the memory family's backend when the profile serves the
// family: PostgreSQL when ARROWHEAD_MEMORY_DSN is set, the embedded store's
// memory namespace otherwise. It also returns the embedder the family
// embeds memories and queries with, nil for keyword recall (see
// memoryEmbedder). Both are nil when the family is not served.
func (rt *Runtime) openMemory(ctx context.Context, s *settings.Settings, embedder ports.Embedder) (ports.MemoryBackend, ports.Embedder, error) {
	if !memorytools.Family.Serves(s) {
		return nil, nil, nil
	}
	if s.MemoryDSN != "" {
		pool, err := rt.openPool(ctx, s.MemoryDSN)
		if err != nil {
			return nil, nil, fmt.Errorf("ARROWHEAD_MEMORY_DSN: %w", err)
		}
		store, err := postgres.NewMemoryStore(ctx, pool, postgres.MemoryConfig{Dimensions: s.EmbeddingDimensions})
		switch {
		case errors.Is(err, postgres.ErrMemorySchema):
			return nil, nil, errors.New("ARROWHEAD_MEMORY_DSN: the memory tables are missing or from an earlier build; run `arrowhead migrate` with this ARROWHEAD_MEMORY_DSN")
		case errors.Is(err, postgres.ErrMemoryUnreachable):
			return nil, nil, errors.New("ARROWHEAD_MEMORY_DSN: the database cannot be reached; check the DSN, and run `arrowhead migrate` with it once it answers")
		case err != nil:
			return nil, nil, fmt.Errorf("ARROWHEAD_MEMORY_DSN: %w", err)
		}
		rt.Health = append(rt.Health, store)
		return store, memoryEmbedder(store.Semantic(), embedder), nil
	}
	store, err := rt.sharedStore(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	return sqlite.NewMemoryStore(store), nil, nil
}

// memoryEmbedder is the one place that decides whether memories are
// recalled semantically: only when the backend can store and rank
// embeddings (PostgreSQL where 002_memory_vector ran at the configured
// width) and the embedder's vectors carry meaning (Semantic: the http
// provider; ranking by the deterministic embedder's would be a keyword
// search mislabelled semantic, the same rule vector_query labels by). The
// family embeds exactly when it is given an embedder, and the backend
// reports the recall it performed.
func memoryEmbedder(backendSemantic bool, e ports.Embedder) ports.Embedder {
	if backendSemantic && e != nil && e.Semantic() {
		return e
	}
	return nil
}
