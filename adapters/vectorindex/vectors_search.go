package vectorindex

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Vector search of the embedded index: an exact scan of one tenant's flat
// vector table, split across cores when it is large, keeping the best k in
// a heap.

// scanFloatsPerShard is the least work (in multiply-adds) given to one
// goroutine of a parallel vector scan; below it a goroutine costs more
// than it saves.
const scanFloatsPerShard = 1 << 18

// Search returns the k chunks of tenant nearest to embedding by cosine
// similarity, best first (ties by id).
func (x *VectorIndex) Search(ctx context.Context, collection, tenant string, embedding []float32, k int) ([]ports.VectorHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxVectorErr(err)
	}
	q, err := x.checkQuery(tenant, embedding, k)
	if err != nil {
		return nil, err
	}
	hits := []ports.VectorHit{}
	err = x.readTenant(ctx, collection, tenant, func(t *vtenant) {
		top := t.nearest(q, k)
		hits = make([]ports.VectorHit, len(top))
		for i, s := range top {
			hits[i] = t.hit(s.slot, float64(s.score))
		}
	})
	return hits, err
}

type scored struct {
	slot  uint32
	score float32
}

// nearest returns the n live slots with the highest dot product with q,
// best first, ties by id.
func (t *vtenant) nearest(q []float32, n int) []scored {
	rows := len(t.chunks)
	shards := 1
	if work := rows * t.dim; work >= 2*scanFloatsPerShard {
		shards = min(runtime.GOMAXPROCS(0), work/scanFloatsPerShard)
	}
	if shards <= 1 {
		h := topN{t: t, n: n}
		t.scan(q, 0, rows, &h)
		return h.sorted()
	}
	heaps := make([]topN, shards)
	var wg sync.WaitGroup
	per := (rows + shards - 1) / shards
	for i := range shards {
		lo, hi := i*per, min((i+1)*per, rows)
		heaps[i] = topN{t: t, n: n}
		wg.Go(func() { t.scan(q, lo, hi, &heaps[i]) })
	}
	wg.Wait()
	merged := topN{t: t, n: n}
	for i := range heaps {
		for _, s := range heaps[i].items {
			merged.offer(s)
		}
	}
	return merged.sorted()
}

func (t *vtenant) scan(q []float32, lo, hi int, h *topN) {
	dim := t.dim
	for slot := lo; slot < hi; slot++ {
		if !t.chunks[slot].alive {
			continue
		}
		s := dot(q, t.vecs[slot*dim:(slot+1)*dim])
		if len(h.items) == h.n && s < h.items[0].score {
			continue // cannot enter the heap: skip the offer's bookkeeping
		}
		h.offer(scored{slot: uint32(slot), score: s})
	}
}

// dot is the inner product, unrolled eight ways with four accumulators so
// the additions do not wait on one another.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += aa[0]*bb[0] + aa[4]*bb[4]
		s1 += aa[1]*bb[1] + aa[5]*bb[5]
		s2 += aa[2]*bb[2] + aa[6]*bb[6]
		s3 += aa[3]*bb[3] + aa[7]*bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// topN keeps the best n offers in a min-heap whose root is the worst kept.
type topN struct {
	t     *vtenant
	n     int
	items []scored
}

// worse orders by score, then by id descending (a larger id loses a tie).
func (h *topN) worse(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return h.t.chunks[a.slot].id > h.t.chunks[b.slot].id
}

func (h *topN) offer(s scored) {
	if len(h.items) < h.n {
		h.items = append(h.items, s)
		for i := len(h.items) - 1; i > 0; {
			p := (i - 1) / 2
			if !h.worse(h.items[i], h.items[p]) {
				break
			}
			h.items[i], h.items[p] = h.items[p], h.items[i]
			i = p
		}
		return
	}
	if !h.worse(h.items[0], s) {
		return
	}
	h.items[0] = s
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.items) && h.worse(h.items[l], h.items[m]) {
			m = l
		}
		if r < len(h.items) && h.worse(h.items[r], h.items[m]) {
			m = r
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

func (h *topN) sorted() []scored {
	out := slices.Clone(h.items)
	slices.SortFunc(out, func(a, b scored) int {
		switch {
		case h.worse(b, a):
			return -1
		case h.worse(a, b):
			return 1
		}
		return 0
	})
	return out
}
