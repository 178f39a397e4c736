package sqlite_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/adapters/vectorindex"
	"github.com/arrowhead-go/arrowhead/ports"
)

const (
	vecCollection = "doc_chunks"
	vecDims       = 8
	// vectorHelperEnv makes the test binary a vector helper process (see
	// init below) serving the index in the directory it names.
	vectorHelperEnv = "ARROWHEAD_SQLITE_VECTOR_HELPER"
)

// The vector helper is started before TestMain (process_test.go's helper
// serves the other state), so this file needs nothing of that one.
func init() {
	if dir := os.Getenv(vectorHelperEnv); dir != "" {
		os.Exit(serveVectorHelper(dir))
	}
}

func vecConfig() vectorindex.VectorIndexConfig {
	return vectorindex.VectorIndexConfig{Collections: []string{vecCollection, "other_chunks"}, Dimensions: vecDims, MaxK: 50}
}

func openVectors(t testing.TB, s *sqlite.Store) *vectorindex.VectorIndex {
	t.Helper()
	cfg := vecConfig()
	cfg.Persist = sqlite.NewVectorStore(s)
	x, err := vectorindex.OpenVectorIndex(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// vecOf is a unit vector nearest to axis seed%vecDims, a little tilted by
// seed so vectors differ.
func vecOf(seed int) []float32 {
	v := make([]float32, vecDims)
	v[seed%vecDims] = 1
	v[(seed+1)%vecDims] = float32(seed%97) / 1000
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}

func vchunk(id, tenant, source string, index int, content string, seed int) ports.Chunk {
	return ports.Chunk{ID: id, Tenant: tenant, Source: source, Index: index, Content: content, Hash: "h-" + content, Embedding: vecOf(seed)}
}

// ---- import ----

// writeBoltVectors writes collections into the previous release's vector
// namespace in its documented layout
// (adapters/bolt/boltstores/vectors_store.go), encoded here independently
// of the reader.
func writeBoltVectors(t *testing.T, ns *bolt.Namespace, dims int, byCollection map[string][]ports.Chunk) {
	t.Helper()
	err := ns.Update(context.Background(), func(root *bbolt.Bucket) error {
		for name, chunks := range byCollection {
			b, err := root.CreateBucketIfNotExists([]byte(name))
			if err != nil {
				return err
			}
			cb, err := b.CreateBucketIfNotExists([]byte("chunks"))
			if err != nil {
				return err
			}
			for _, ch := range chunks {
				key := append([]byte(ch.Tenant+"\x00"+ch.Source+"\x00"), binary.BigEndian.AppendUint32(nil, uint32(ch.Index))...)
				var v []byte
				for _, s := range []string{ch.ID, ch.Hash, ch.Content} {
					v = binary.LittleEndian.AppendUint32(v, uint32(len(s)))
					v = append(v, s...)
				}
				for _, f := range ch.Embedding {
					v = binary.LittleEndian.AppendUint32(v, math.Float32bits(f))
				}
				if err := cb.Put(key, bolt.Seal(key, v)); err != nil {
					return err
				}
			}
			meta := binary.LittleEndian.AppendUint32(nil, 1)
			meta = binary.LittleEndian.AppendUint32(meta, uint32(dims))
			meta = binary.LittleEndian.AppendUint64(meta, uint64(len(chunks)))
			if err := b.Put([]byte("meta"), bolt.Seal([]byte("meta"), meta)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// oldStore is the previous release's bbolt store in dir, with vectors.
type oldStore struct {
	src   sqlite.BoltSource
	vecNS *bolt.Namespace
}

func openOldStore(t *testing.T, dir string) oldStore {
	t.Helper()
	old, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { old.Close() })
	ns := func(name string) *bolt.Namespace {
		n, err := old.Namespace(name)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	sets, err := boltstores.NewWorkingSets(ns(boltstores.WorkingSetsNamespace), wsLimits)
	if err != nil {
		t.Fatal(err)
	}
	vecNS := ns(boltstores.VectorNamespace)
	return oldStore{vecNS: vecNS, src: sqlite.BoltSource{
		Memory: boltstores.NewMemoryStore(ns(boltstores.MemoryNamespace)), WorkingSets: sets,
		Vectors: func(fn func(boltstores.VectorDump) error) error {
			return boltstores.DumpBoltVectors(context.Background(), vecNS, fn)
		},
	}}
}

// The previous release's vectors move into the shared store once, every
// collection of them (allow-listed or not), and the index serves them.
func TestImportBoltMovesVectorsOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old := openOldStore(t, dir)
	var docs []ports.Chunk
	for i := range 30 {
		docs = append(docs, vchunk(fmt.Sprintf("c%02d", i), []string{"acme", "globex"}[i%2], fmt.Sprintf("doc%d.md", i/4), i%4, fmt.Sprintf("zebra chunk %d", i), i))
	}
	retired := []ports.Chunk{vchunk("r1", "acme", "old.md", 0, "retired collection", 3)}
	writeBoltVectors(t, old.vecNS, vecDims, map[string][]ports.Chunk{vecCollection: docs, "retired_chunks": retired})

	s := openStore(t, dir)
	if imported, err := s.ImportBolt(ctx, old.src); err != nil || !imported {
		t.Fatalf("ImportBolt = %v %v", imported, err)
	}
	// Written after the import: not imported again.
	writeBoltVectors(t, old.vecNS, vecDims, map[string][]ports.Chunk{vecCollection: append(docs, vchunk("late", "acme", "late.md", 0, "late", 1))})
	if imported, err := s.ImportBolt(ctx, old.src); err != nil || imported {
		t.Fatalf("second ImportBolt = %v %v", imported, err)
	}

	x := openVectors(t, s)
	for _, tenant := range []string{"acme", "globex"} {
		var want []string
		for _, ch := range docs {
			if ch.Tenant == tenant {
				want = append(want, ch.ID)
			}
		}
		hits, err := x.Search(ctx, vecCollection, tenant, vecOf(0), 50)
		var got []string
		for _, h := range hits {
			got = append(got, h.ID)
		}
		slices.Sort(got)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%s after import: %v %v, want %v", tenant, got, err, want)
		}
	}
	h, err := x.Hashes(ctx, vecCollection, "acme", "doc0.md")
	if err != nil || len(h) != 2 || h[0] != "h-zebra chunk 0" || h[2] != "h-zebra chunk 2" {
		t.Fatalf("hashes after import: %v %v", h, err)
	}
	if hits, err := x.Hybrid(ctx, vecCollection, "acme", "zebra", vecOf(4), 3, ports.HybridOptions{RRFK: 60, CandidateMultiplier: 2}); err != nil || len(hits) != 3 {
		t.Fatalf("hybrid after import: %v %v", hits, err)
	}
	// The collection no longer allow-listed is kept, for when it is again.
	cfg := vecConfig()
	cfg.Collections = []string{"retired_chunks"}
	cfg.Persist = sqlite.NewVectorStore(s)
	y, err := vectorindex.OpenVectorIndex(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := y.Search(ctx, "retired_chunks", "acme", vecOf(3), 5); err != nil || len(hits) != 1 || hits[0].Content != "retired collection" {
		t.Fatalf("retired collection after import: %+v %v", hits, err)
	}
	// The import writes what a write would: the index's next write plans
	// against it, and the position the import filled is taken.
	err = x.Upsert(ctx, vecCollection, []ports.Chunk{vchunk("intruder", "acme", "doc0.md", 0, "x", 1)})
	if !errors.Is(err, ports.ErrVectorIDConflict) {
		t.Fatalf("writing over an imported position: %v", err)
	}
}

// Damaged vectors in the previous store fail the whole import, which
// changes nothing and runs again at the next start: nothing is left
// behind silently.
func TestImportBoltRefusesDamagedVectors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old := openOldStore(t, dir)
	writeBoltVectors(t, old.vecNS, vecDims, map[string][]ports.Chunk{vecCollection: {vchunk("a", "acme", "a.md", 0, "fine", 1), vchunk("b", "acme", "b.md", 0, "damaged", 2)}})
	if _, _, err := old.src.Memory.Store(ctx, "alice", memorytest.Write("n", "a memory", time.Now()), ports.MemoryLimits{}); err != nil {
		t.Fatal(err)
	}
	err := old.vecNS.Update(ctx, func(root *bbolt.Bucket) error {
		cb := root.Bucket([]byte(vecCollection)).Bucket([]byte("chunks"))
		k, v := cb.Cursor().Last()
		v = slices.Clone(v)
		v[len(v)-1] ^= 1
		return cb.Put(slices.Clone(k), v)
	})
	if err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	if imported, err := s.ImportBolt(ctx, old.src); !errors.Is(err, vectorindex.ErrVectorCorrupt) || imported {
		t.Fatalf("ImportBolt of damaged vectors = %v %v", imported, err)
	}
	if done, err := s.Imported(ctx); err != nil || done {
		t.Fatalf("marked imported after a failed import: %v %v", done, err)
	}
	if list, _, err := sqlite.NewMemoryStore(s).List(ctx, "alice", "n", 0); err != nil || len(list) != 0 {
		t.Fatalf("a failed import left memories: %v %v", list, err)
	}
	if hits, err := openVectors(t, s).Search(ctx, vecCollection, "acme", vecOf(1), 5); err != nil || len(hits) != 0 {
		t.Fatalf("a failed import left vectors: %v %v", hits, err)
	}
}

// ---- several processes ----

type vcommand struct {
	Op      string `json:"op"`
	ID      string `json:"id,omitempty"`
	Tenant  string `json:"tenant,omitempty"`
	Source  string `json:"source,omitempty"`
	Index   int    `json:"index,omitempty"`
	Content string `json:"content,omitempty"`
	Seed    int    `json:"seed,omitempty"`
	N       int    `json:"n,omitempty"`
}

type vreply struct {
	Err     string   `json:"err,omitempty"`
	IDs     []string `json:"ids,omitempty"`
	Sources []string `json:"sources,omitempty"`
}

// serveVectorHelper serves the vector index in dir, one command a line.
func serveVectorHelper(dir string) int {
	s, err := sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	cfg := vecConfig()
	cfg.Persist = sqlite.NewVectorStore(s)
	x, err := vectorindex.OpenVectorIndex(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	enc := json.NewEncoder(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var c vcommand
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return 1
		}
		var r vreply
		var err error
		switch c.Op {
		case "upsert":
			err = x.Upsert(ctx, vecCollection, []ports.Chunk{vchunk(c.ID, c.Tenant, c.Source, c.Index, c.Content, c.Seed)})
		case "burst": // N upserts of one chunk each, ids ID0..ID(N-1)
			for i := 0; i < c.N && err == nil; i++ {
				err = x.Upsert(ctx, vecCollection, []ports.Chunk{vchunk(fmt.Sprint(c.ID, i), c.Tenant, fmt.Sprint(c.Source, i), 0, c.Content, i)})
			}
		case "truncate":
			err = x.Truncate(ctx, vecCollection, c.Tenant, c.Source, c.Index)
		case "search":
			var hits []ports.VectorHit
			hits, err = x.Search(ctx, vecCollection, c.Tenant, vecOf(c.Seed), c.N)
			for _, h := range hits {
				r.IDs = append(r.IDs, h.ID)
			}
		case "sources":
			r.Sources, err = x.Sources(ctx, vecCollection, c.Tenant, "")
		}
		if err != nil {
			r.Err = err.Error()
		}
		if enc.Encode(r) != nil {
			return 1
		}
	}
	return 0
}

type vhelper struct {
	t   testing.TB
	in  io.WriteCloser
	out *json.Decoder
}

func startVectorHelper(t testing.TB, dir string) *vhelper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), vectorHelperEnv+"="+dir)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return &vhelper{t: t, in: in, out: json.NewDecoder(out)}
}

func (h *vhelper) do(c vcommand) vreply {
	h.t.Helper()
	b, _ := json.Marshal(c)
	if _, err := h.in.Write(append(b, '\n')); err != nil {
		h.t.Fatal(err)
	}
	var r vreply
	if err := h.out.Decode(&r); err != nil {
		h.t.Fatalf("vector helper %s: %v", c.Op, err)
	}
	return r
}

// Two OS processes on one directory: a chunk upserted through one is
// found by the other's next query, both ways; a truncation through one
// is seen by the other; a write planned against a stale memory is planned
// again against the other's writes (here refused, for the position the
// other process took).
func TestVectorsAreSharedBetweenProcesses(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	x := openVectors(t, openStore(t, dir))
	// This process loads the (empty) collection before the other writes.
	if hits, err := x.Search(ctx, vecCollection, "acme", vecOf(0), 5); err != nil || len(hits) != 0 {
		t.Fatalf("empty: %v %v", hits, err)
	}
	other := startVectorHelper(t, dir)

	if r := other.do(vcommand{Op: "upsert", ID: "from-helper", Tenant: "acme", Source: "a.md", Content: "written by the helper", Seed: 2}); r.Err != "" {
		t.Fatal(r.Err)
	}
	hits, err := x.Search(ctx, vecCollection, "acme", vecOf(2), 5)
	if err != nil || len(hits) != 1 || hits[0].ID != "from-helper" || hits[0].Content != "written by the helper" {
		t.Fatalf("this process searches %+v %v", hits, err)
	}
	if err := x.Upsert(ctx, vecCollection, []ports.Chunk{vchunk("from-here", "acme", "b.md", 0, "written here", 5)}); err != nil {
		t.Fatal(err)
	}
	if r := other.do(vcommand{Op: "search", Tenant: "acme", Seed: 5, N: 1}); r.Err != "" || !slices.Equal(r.IDs, []string{"from-here"}) {
		t.Fatalf("helper searches %+v", r)
	}
	// The helper takes a position this process has not seen yet; this
	// process's write of another id there is refused, not applied.
	if r := other.do(vcommand{Op: "upsert", ID: "helper-pos", Tenant: "acme", Source: "c.md", Content: "taken", Seed: 3}); r.Err != "" {
		t.Fatal(r.Err)
	}
	err = x.Upsert(ctx, vecCollection, []ports.Chunk{vchunk("here-pos", "acme", "c.md", 0, "too late", 4)})
	if !errors.Is(err, ports.ErrVectorIDConflict) {
		t.Fatalf("conflicting write across processes: %v", err)
	}
	if r := other.do(vcommand{Op: "truncate", Tenant: "acme", Source: "a.md"}); r.Err != "" {
		t.Fatal(r.Err)
	}
	srcs, err := x.Sources(ctx, vecCollection, "acme", "")
	if err != nil || !slices.Equal(srcs, []string{"b.md", "c.md"}) {
		t.Fatalf("after the helper's truncate: %v %v", srcs, err)
	}
	if r := other.do(vcommand{Op: "sources", Tenant: "globex"}); r.Err != "" || len(r.Sources) != 0 {
		t.Fatalf("another tenant: %+v", r)
	}
}

// Both processes write the same collection at once: every write of each
// lands (the stale ones are planned again), and both end with the same
// index.
func TestConcurrentVectorWritesFromTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	x := openVectors(t, openStore(t, dir))
	other := startVectorHelper(t, dir)
	const n = 40
	var wg sync.WaitGroup
	var helperErr string
	wg.Go(func() {
		helperErr = other.do(vcommand{Op: "burst", ID: "h", Tenant: "acme", Source: "h", Content: "helper", N: n}).Err
	})
	for i := range n {
		if err := x.Upsert(ctx, vecCollection, []ports.Chunk{vchunk(fmt.Sprint("p", i), "acme", fmt.Sprint("p", i), 0, "parent", i)}); err != nil {
			t.Error(err)
		}
	}
	wg.Wait()
	if helperErr != "" {
		t.Fatal(helperErr)
	}
	srcs, err := x.Sources(ctx, vecCollection, "acme", "")
	if err != nil || len(srcs) != 2*n {
		t.Fatalf("this process sees %d sources, want %d: %v", len(srcs), 2*n, err)
	}
	if r := other.do(vcommand{Op: "sources", Tenant: "acme"}); r.Err != "" || !slices.Equal(r.Sources, srcs) {
		t.Fatalf("the helper sees %d sources, this process %d", len(r.Sources), len(srcs))
	}
}

// The row checksum is CRC-32C (what the layout documents): recomputed
// here independently over a row the store wrote.
func TestVectorRowChecksum(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	x := openVectors(t, s)
	ch := vchunk("id1", "acme", "a.md", 3, "some content", 1)
	if err := x.Upsert(ctx, vecCollection, []ports.Chunk{ch}); err != nil {
		t.Fatal(err)
	}
	var emb []byte
	var sum int64
	err := s.Read(ctx, func(tx *sqlite.Tx) error {
		return tx.QueryRowContext(ctx, "SELECT embedding, sum FROM vec_chunk WHERE id = 'id1'").Scan(&emb, &sum)
	})
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	b = append(b, "acme\x00a.md\x00"...)
	b = binary.LittleEndian.AppendUint64(b, 3)
	b = append(b, "id1\x00h-some content\x00"...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(ch.Content)))
	b = append(b, ch.Content...)
	b = append(b, emb...)
	if want := int64(crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))); sum != want {
		t.Errorf("sum %d, want %d", sum, want)
	}
	for i := range vecDims {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(emb[4*i:])); got != ch.Embedding[i] {
			t.Fatalf("embedding[%d] = %v, want %v", i, got, ch.Embedding[i])
		}
	}
}

// TestDamagedVectorPagesAreRefusedBeforeTheirFirstUse: the vector table is
// not checked at open (it is what makes a large store slow to start), so
// a store whose vector pages are damaged opens, but its vectors are
// refused, never served, and readiness says the store is damaged.
func TestDamagedVectorPagesAreRefusedBeforeTheirFirstUse(t *testing.T) {
	dir := t.TempDir()
	s, err := sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	x := openVectors(t, s)
	var chunks []ports.Chunk
	for i := range 400 {
		chunks = append(chunks, vchunk(fmt.Sprintf("c%d", i), "acme", fmt.Sprintf("d%d.md", i), 0, strings.Repeat("text ", 100), i))
	}
	if err := x.Upsert(context.Background(), vecCollection, chunks); err != nil {
		t.Fatal(err)
	}
	x.Close()
	if err := s.Close(); err != nil { // checkpoints the log into the file
		t.Fatal(err)
	}
	path := filepath.Join(dir, sqlite.FileName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The last pages written hold the chunks (and their indexes).
	for i := len(raw) - 40*4096; i < len(raw)-4096; i++ {
		raw[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}

	s, err = sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		t.Fatalf("Open of a store whose vector pages are damaged = %v; only the vector table is", err)
	}
	t.Cleanup(func() { s.Close() })
	if state, _ := s.HealthReason(context.Background()); state == ports.HealthDown {
		t.Fatal("down before the vector table was used")
	}
	y := openVectors(t, s)
	_, err = y.Search(context.Background(), vecCollection, "acme", vecOf(1), 3)
	if !errors.Is(err, vectorindex.ErrVectorCorrupt) {
		t.Fatalf("Search on damaged vector pages = %v, want ErrVectorCorrupt", err)
	}
	if state, reason := s.HealthReason(context.Background()); state != ports.HealthDown {
		t.Fatalf("readiness after the damage was found = %v %q, want down", state, reason)
	}
	// Writes are refused too, before they touch the damaged table.
	if err := y.Upsert(context.Background(), vecCollection, chunks[:1]); !errors.Is(err, vectorindex.ErrVectorCorrupt) {
		t.Fatalf("Upsert on damaged vector pages = %v, want ErrVectorCorrupt", err)
	}
}
