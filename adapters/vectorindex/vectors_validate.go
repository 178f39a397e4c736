package vectorindex

import (
	"context"
	"errors"
	"math"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Argument checks of the embedded index: every vector store's
// (ports/vectorcheck.go), then the unit-length copy the scan needs.

func (x *VectorIndex) checkQuery(tenant string, embedding []float32, k int) ([]float32, error) {
	if err := ports.CheckVectorQuery(tenant, embedding, k, x.maxK, x.dim); err != nil {
		return nil, err
	}
	return unit(embedding), nil
}

// checkChunk validates one chunk and returns it with a unit-length copy of
// its embedding.
func (x *VectorIndex) checkChunk(ch ports.Chunk) (ports.Chunk, error) {
	if err := ports.CheckVectorChunk(ch, x.dim); err != nil {
		return ch, err
	}
	ch.Embedding = unit(ch.Embedding)
	return ch, nil
}

// unit returns v, checked finite and non-zero, scaled to unit length.
func unit(v []float32) []float32 {
	var sum float64
	for _, f := range v {
		sum += float64(f) * float64(f)
	}
	norm := math.Sqrt(sum)
	out := make([]float32, len(v))
	for i, f := range v {
		out[i] = float32(float64(f) / norm)
	}
	return out
}

func ctxVectorErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return vectorErr(ports.VectorTimeout, err)
	}
	return vectorErr(ports.VectorFailed, err)
}
