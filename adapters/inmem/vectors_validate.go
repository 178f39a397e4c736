package inmem

import (
	"context"
	"errors"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Argument validation of the embedded index.

func (x *VectorIndex) checkQuery(tenant string, embedding []float32, k int) ([]float32, error) {
	if err := checkKey(tenant, MaxVectorTenantBytes); err != nil {
		return nil, err
	}
	if k < 1 || k > x.maxK {
		return nil, vectorErr(ports.VectorLimit, ErrVectorK)
	}
	return unit(embedding, x.dim)
}

func checkHybrid(query string, opt ports.HybridOptions) error {
	if len(query) > MaxVectorQueryBytes || !validText(query) {
		return vectorErr(ports.VectorFailed, ErrVectorArgument)
	}
	if opt.RRFK < 0 || opt.RRFK > MaxVectorRRFK ||
		opt.CandidateMultiplier < 1 || opt.CandidateMultiplier > MaxVectorCandidateMultiplier {
		return vectorErr(ports.VectorLimit, ErrVectorArgument)
	}
	if opt.Language != "" && !identifierPattern.MatchString(opt.Language) {
		return vectorErr(ports.VectorFailed, ErrVectorArgument)
	}
	return nil
}

// checkChunk validates one chunk and returns it with a unit-length copy of
// its embedding.
func (x *VectorIndex) checkChunk(ch ports.Chunk) (ports.Chunk, error) {
	if err := checkKey(ch.Tenant, MaxVectorTenantBytes); err != nil {
		return ch, err
	}
	if err := checkKey(ch.ID, MaxVectorKeyBytes); err != nil {
		return ch, err
	}
	if err := checkKey(ch.Source, MaxVectorSourceBytes); err != nil {
		return ch, err
	}
	if ch.Index < 0 || ch.Index > math.MaxInt32 {
		return ch, vectorErr(ports.VectorFailed, ErrVectorArgument)
	}
	if len(ch.Hash) > MaxVectorKeyBytes || !validText(ch.Hash) || !validText(ch.Content) {
		return ch, vectorErr(ports.VectorFailed, ErrVectorArgument)
	}
	if len(ch.Content) > MaxVectorContentBytes {
		return ch, vectorErr(ports.VectorLimit, ErrVectorTooLarge)
	}
	u, err := unit(ch.Embedding, x.dim)
	if err != nil {
		return ch, err
	}
	ch.Embedding = u
	return ch, nil
}

// checkKey accepts a non-empty text of at most max bytes.
func checkKey(s string, max int) error {
	if s == "" || len(s) > max || !validText(s) {
		return vectorErr(ports.VectorFailed, ErrVectorArgument)
	}
	return nil
}

// validText is what a Postgres text column can store: valid UTF-8 without
// NUL. The embedded index refuses the rest too, so both stores agree.
func validText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// unit returns v scaled to unit length, refusing a wrong width, a
// non-finite value and the zero vector (whose direction is undefined).
func unit(v []float32, dim int) ([]float32, error) {
	if len(v) != dim {
		return nil, vectorErr(ports.VectorDimension, errors.New("embedding width does not match the collection"))
	}
	var sum float64
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, vectorErr(ports.VectorFailed, ErrVectorNonFinite)
		}
		sum += float64(f) * float64(f)
	}
	if sum == 0 {
		return nil, vectorErr(ports.VectorFailed, ErrVectorZeroNorm)
	}
	norm := math.Sqrt(sum)
	out := make([]float32, dim)
	for i, f := range v {
		out[i] = float32(float64(f) / norm)
	}
	return out, nil
}

func ctxVectorErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return vectorErr(ports.VectorTimeout, err)
	}
	return vectorErr(ports.VectorFailed, err)
}
