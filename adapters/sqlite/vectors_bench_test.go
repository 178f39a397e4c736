package sqlite_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/adapters/vectorindex"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The embedded vector index on the shared store at 100,000 chunks of 384
// dimensions in one tenant (the data of adapters/vectorindex's
// BenchmarkEmbeddedQuery100k): time from opening the store to the first
// answer, and query latency with the freshness check every query makes.
//
//	go test ./adapters/sqlite -run '^$' -bench 'Vector.*100k' -benchtime 10x
//
// The store is built once per run (about a minute) in
// ARROWHEAD_BENCH_VECTOR_DIR when set (kept between runs), else in a
// temporary directory.

const (
	benchChunks = 100_000
	benchDims   = 384
)

var benchWords = []string{
	"refund", "window", "policy", "invoice", "customer", "shipping", "return", "warranty",
	"account", "password", "billing", "support", "order", "delivery", "tracking", "discount",
}

type benchRand struct{ r *rand.Rand }

func (g benchRand) unit() []float32 {
	v := make([]float32, benchDims)
	var sum float64
	for i := range v {
		f := g.r.NormFloat64()
		v[i] = float32(f)
		sum += f * f
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(sum))
	}
	return v
}

func (g benchRand) text(words int) string {
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

var (
	benchDirOnce sync.Once
	benchDir     string
	benchDirErr  error
)

func benchConfig(s *sqlite.Store) vectorindex.VectorIndexConfig {
	return vectorindex.VectorIndexConfig{Collections: []string{"bench"}, Dimensions: benchDims, MaxK: 50, Persist: sqlite.NewVectorStore(s)}
}

// benchStore100k returns a data directory whose store holds the 100k
// chunks, closed.
func benchStore100k(b *testing.B) string {
	b.Helper()
	benchDirOnce.Do(func() {
		dir := os.Getenv("ARROWHEAD_BENCH_VECTOR_DIR")
		if dir == "" {
			dir, benchDirErr = os.MkdirTemp("", "vecbench")
			if benchDirErr != nil {
				return
			}
		} else if _, err := os.Stat(filepath.Join(dir, "complete")); err == nil {
			benchDir = dir
			return
		}
		benchDir, benchDirErr = dir, buildBenchStore(dir)
		if benchDirErr == nil {
			benchDirErr = os.WriteFile(filepath.Join(dir, "complete"), nil, 0o600)
		}
	})
	if benchDirErr != nil {
		b.Fatal(benchDirErr)
	}
	return benchDir
}

func buildBenchStore(dir string) error {
	s, err := sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		return err
	}
	defer s.Close()
	x, err := vectorindex.OpenVectorIndex(context.Background(), benchConfig(s))
	if err != nil {
		return err
	}
	g := benchRand{rand.New(rand.NewPCG(1, 1^0x9e3779b97f4a7c15))}
	const batch = 5000
	for start := 0; start < benchChunks; start += batch {
		chunks := make([]ports.Chunk, 0, batch)
		for i := start; i < start+batch; i++ {
			chunks = append(chunks, ports.Chunk{
				ID: fmt.Sprintf("c%06d", i), Tenant: "acme", Source: fmt.Sprintf("docs/%d.md", i/20), Index: i % 20,
				Content: g.text(40), Hash: "h", Embedding: g.unit(),
			})
		}
		if err := x.Upsert(context.Background(), "bench", chunks); err != nil {
			return err
		}
	}
	return nil
}

func reportP50(b *testing.B, samples []time.Duration) {
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds())/1e6, "p50-ms")
	b.ReportMetric(float64(samples[min(len(samples)-1, len(samples)*99/100)].Nanoseconds())/1e6, "p99-ms")
}

// BenchmarkVectorOpenToFirstAnswer100k is a process's start on a data
// directory holding the index: open the store (its quick_check included),
// open the index (index-open-p50-ms: all that precedes a first answer
// that is not a vector query), answer one query (which loads the
// collection: p50-ms).
func BenchmarkVectorOpenToFirstAnswer100k(b *testing.B) {
	dir := benchStore100k(b)
	q := benchRand{rand.New(rand.NewPCG(2, 2))}.unit()
	ctx := context.Background()
	var samples, opens, indexOpens []time.Duration
	for b.Loop() {
		start := time.Now()
		s, err := sqlite.Open(sqlite.Config{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		opened := time.Since(start)
		x, err := vectorindex.OpenVectorIndex(ctx, benchConfig(s))
		if err != nil {
			b.Fatal(err)
		}
		indexOpens = append(indexOpens, time.Since(start))
		hits, err := x.Search(ctx, "bench", "acme", q, 10)
		samples = append(samples, time.Since(start))
		opens = append(opens, opened)
		if err != nil || len(hits) != 10 {
			b.Fatalf("Search: %d hits, %v", len(hits), err)
		}
		x.Close()
		s.Close()
	}
	reportP50(b, samples)
	slices.Sort(opens)
	b.ReportMetric(float64(opens[len(opens)/2].Nanoseconds())/1e6, "store-open-p50-ms")
	slices.Sort(indexOpens)
	b.ReportMetric(float64(indexOpens[len(indexOpens)/2].Nanoseconds())/1e6, "index-open-p50-ms")
}

// BenchmarkVectorQuery100k is vector_query's store call on the loaded
// index, each query first checking the collection's change counter.
func BenchmarkVectorQuery100k(b *testing.B) {
	dir := benchStore100k(b)
	s, err := sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	x, err := vectorindex.OpenVectorIndex(ctx, benchConfig(s))
	if err != nil {
		b.Fatal(err)
	}
	g := benchRand{rand.New(rand.NewPCG(3, 3))}
	queries := make([][]float32, 64)
	for i := range queries {
		queries[i] = g.unit()
	}
	if _, err := x.Search(ctx, "bench", "acme", queries[0], 10); err != nil {
		b.Fatal(err)
	}
	var samples []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		hits, err := x.Search(ctx, "bench", "acme", queries[i%len(queries)], 10)
		samples = append(samples, time.Since(start))
		if err != nil || len(hits) != 10 {
			b.Fatalf("Search: %d hits, %v", len(hits), err)
		}
		i++
	}
	reportP50(b, samples)
}

// BenchmarkVectorFreshnessCheck is what persistence adds to every query:
// a search of a ten-chunk collection (whose scan costs next to nothing)
// on the store, against the same search on an index held in memory only.
func BenchmarkVectorFreshnessCheck(b *testing.B) {
	ctx := context.Background()
	g := benchRand{rand.New(rand.NewPCG(4, 4))}
	chunks := make([]ports.Chunk, 10)
	for i := range chunks {
		chunks[i] = ports.Chunk{ID: fmt.Sprint("c", i), Tenant: "acme", Source: fmt.Sprint("s", i), Content: g.text(10), Hash: "h", Embedding: g.unit()}
	}
	q := g.unit()
	for _, persisted := range []bool{false, true} {
		b.Run(fmt.Sprintf("persisted=%v", persisted), func(b *testing.B) {
			cfg := vectorindex.VectorIndexConfig{Collections: []string{"bench"}, Dimensions: benchDims, MaxK: 50}
			if persisted {
				cfg = benchConfig(openStore(b, b.TempDir()))
			}
			x, err := vectorindex.OpenVectorIndex(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			if err := x.Upsert(ctx, "bench", chunks); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if hits, err := x.Search(ctx, "bench", "acme", q, 10); err != nil || len(hits) != 10 {
					b.Fatal(len(hits), err)
				}
			}
		})
	}
}
