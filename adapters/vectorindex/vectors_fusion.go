package vectorindex

import (
	"context"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Hybrid search of the embedded index: reciprocal rank fusion of the
// vector and keyword rankings.

// Hybrid fuses the vector ranking and the BM25 keyword ranking of tenant's
// chunks by reciprocal rank fusion: each branch contributes its top
// k*CandidateMultiplier, a chunk scores the sum of 1/(RRFK + rank) over the
// branches that ranked it (rank from 1), and the best k are returned (ties
// by id). This is the formula the Postgres adapter computes in SQL.
//
// The keyword branch matches chunks holding every query term, as
// websearch_to_tsquery does for plain words, without stemming beyond plural
// folding and without phrase or negation operators.
func (x *VectorIndex) Hybrid(ctx context.Context, collection, tenant, query string, embedding []float32, k int, opt ports.HybridOptions) ([]ports.VectorHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxVectorErr(err)
	}
	q, err := x.checkQuery(tenant, embedding, k)
	if err != nil {
		return nil, err
	}
	if _, err := ports.CheckHybridOptions(query, opt); err != nil {
		return nil, err
	}
	pool := k * opt.CandidateMultiplier
	hits := []ports.VectorHit{}
	err = x.readTenant(ctx, collection, tenant, func(t *vtenant) { hits = t.fuse(q, query, k, pool, opt.RRFK) })
	return hits, err
}

// fuse ranks t's chunks by reciprocal rank fusion of the vector and keyword
// branches, each pool deep, and returns the best k.
func (t *vtenant) fuse(q []float32, query string, k, pool, rrfK int) []ports.VectorHit {
	vec := t.nearest(q, pool)
	kw := t.keyword(query, pool)
	fused := make(map[uint32]float64, len(vec)+len(kw))
	for i, s := range vec {
		fused[s.slot] = 1 / float64(rrfK+i+1)
	}
	for i, s := range kw {
		fused[s.slot] += 1 / float64(rrfK+i+1)
	}
	ranked := t.best(fused, k)
	hits := make([]ports.VectorHit, len(ranked))
	for i, s := range ranked {
		hits[i] = t.hit(s.slot, s.score)
	}
	return hits
}
