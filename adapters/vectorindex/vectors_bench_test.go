package vectorindex_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/vectorindex"
	"github.com/arrowhead-go/arrowhead/ports"
)

// vecRand is a seeded source of test vectors.
type vecRand struct{ r *rand.Rand }

func newVecRand(seed uint64) *vecRand {
	return &vecRand{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// unit returns a random direction: normal components, normalised.
func (g *vecRand) unit(dims int) []float32 {
	v := make([]float32, dims)
	var sum float64
	for i := range v {
		f := g.r.NormFloat64()
		v[i] = float32(f)
		sum += f * f
	}
	n := float32(math.Sqrt(sum))
	for i := range v {
		v[i] /= n
	}
	return v
}

var benchWords = []string{
	"refund", "window", "policy", "invoice", "customer", "shipping", "return", "warranty",
	"account", "password", "billing", "support", "order", "delivery", "tracking", "discount",
}

func (g *vecRand) text(words int) string {
	b := make([]byte, 0, words*8)
	for i := range words {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, benchWords[g.r.IntN(len(benchWords))]...)
		b = fmt.Appendf(b, " %d", g.r.IntN(500))
	}
	return string(b)
}

const (
	benchChunks = 100_000
	benchDims   = 384
	benchK      = 10
)

var (
	benchOnce  sync.Once
	benchIndex *vectorindex.VectorIndex
	benchErr   error
)

// benchIndex100k is one tenant holding 100,000 chunks of 384 dimensions:
// the worst case for the scan, since a query reads every vector.
func benchIndex100k(b *testing.B) *vectorindex.VectorIndex {
	b.Helper()
	benchOnce.Do(func() {
		x, err := vectorindex.OpenVectorIndex(context.Background(), vectorindex.VectorIndexConfig{Collections: []string{"bench"}, Dimensions: benchDims, MaxK: 50})
		if err != nil {
			benchErr = err
			return
		}
		g := newVecRand(1)
		const batch = 2000
		for start := 0; start < benchChunks; start += batch {
			chunks := make([]ports.Chunk, 0, batch)
			for i := start; i < start+batch; i++ {
				chunks = append(chunks, ports.Chunk{
					ID: fmt.Sprintf("c%06d", i), Tenant: "acme", Source: fmt.Sprintf("docs/%d.md", i/20), Index: i % 20,
					Content: g.text(40), Hash: "h", Embedding: g.unit(benchDims),
				})
			}
			if err := x.Upsert(context.Background(), "bench", chunks); err != nil {
				benchErr = err
				return
			}
		}
		benchIndex = x
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchIndex
}

// reportPercentiles adds p50 and p99 latency metrics from per-call samples.
func reportPercentiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	at := func(p float64) float64 {
		return float64(samples[min(len(samples)-1, int(p*float64(len(samples))))].Nanoseconds())
	}
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}

// BenchmarkEmbeddedQuery100k is vector_query's store call at 100,000
// chunks of 384 dimensions, k=10.
func BenchmarkEmbeddedQuery100k(b *testing.B) {
	x := benchIndex100k(b)
	g := newVecRand(2)
	queries := make([][]float32, 256)
	for i := range queries {
		queries[i] = g.unit(benchDims)
	}
	ctx := context.Background()
	samples := make([]time.Duration, 0, 1024)
	i := 0
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		hits, err := x.Search(ctx, "bench", "acme", queries[i%len(queries)], benchK)
		samples = append(samples, time.Since(start))
		if err != nil || len(hits) != benchK {
			b.Fatalf("Search: %d hits, %v", len(hits), err)
		}
		i++
	}
	reportPercentiles(b, samples)
}

// BenchmarkEmbeddedHybrid100k is hybrid_query's store call on the same
// index: the vector scan plus BM25 over 100,000 chunks, k=10, pools of 40.
func BenchmarkEmbeddedHybrid100k(b *testing.B) {
	x := benchIndex100k(b)
	g := newVecRand(3)
	ctx := context.Background()
	opt := ports.HybridOptions{RRFK: 60, CandidateMultiplier: 4, Language: "english"}
	samples := make([]time.Duration, 0, 1024)
	b.ResetTimer()
	for b.Loop() {
		// A word and a number: each is in about 92% and 8% of the chunks,
		// both together in about 7%, so BM25 ranks thousands of matches.
		q := benchWords[g.r.IntN(len(benchWords))] + " " + strconv.Itoa(g.r.IntN(500))
		emb := g.unit(benchDims)
		start := time.Now()
		hits, err := x.Hybrid(ctx, "bench", "acme", q, emb, benchK, opt)
		samples = append(samples, time.Since(start))
		if err != nil || len(hits) != benchK {
			b.Fatalf("Hybrid: %d hits, %v", len(hits), err)
		}
	}
	reportPercentiles(b, samples)
}
