package vectorindex_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/adapters/vectorindex"
	"github.com/arrowhead-go/arrowhead/ports"
)

func TestVectorIndexClosed(t *testing.T) {
	x, done := mustOpenStored(t, t.TempDir(), vecTestConfig())
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err := x.Search(context.Background(), vecTestCollection, "t", unitVec(0), 1)
	wantVecKind(t, err, ports.VectorUnavailable)
	wantVecKind(t, x.Upsert(context.Background(), vecTestCollection, []ports.Chunk{vecChunk("t", "a", 0, "c", unitVec(0))}), ports.VectorUnavailable)
	if err := done(); err != nil {
		t.Fatal(err)
	}
}

func TestVectorIndexCancelledContext(t *testing.T) {
	x := openVecIndex(t, vecTestConfig())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := x.Search(ctx, vecTestCollection, "t", unitVec(0), 1)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Search: %v", err)
	}
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", "a", 0, "c", unitVec(0))}); !errors.Is(err, context.Canceled) {
		t.Errorf("Upsert: %v", err)
	}
}

// refuseWrites makes the store file refuse, from now on, every write to
// the vector chunks (as a full disk or a failing device would), through a
// connection of its own: reads still work.
func refuseWrites(t *testing.T, dir string) {
	t.Helper()
	store, err := sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	err = store.Write(context.Background(), func(tx *sqlite.Tx) error {
		for _, op := range []string{"INSERT", "DELETE"} {
			if _, err := tx.Tx.ExecContext(context.Background(), "CREATE TRIGGER refuse_"+op+" BEFORE "+op+" ON vec_chunk BEGIN SELECT RAISE(ABORT, 'refused'); END"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestVectorIndexFailedWriteChangesNothing: a write the store refuses
// changes neither the file nor memory, and a failed write of a batch
// leaves none of the batch behind.
func TestVectorIndexFailedWriteChangesNothing(t *testing.T) {
	dir := t.TempDir()
	x, _ := mustOpenStored(t, dir, vecTestConfig())
	ctx := context.Background()
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", "a.md", 0, "kept", unitVec(0))}); err != nil {
		t.Fatal(err)
	}
	refuseWrites(t, dir)
	wantVecKind(t, x.Upsert(ctx, vecTestCollection, []ports.Chunk{
		vecChunk("t", "b.md", 0, "lost", unitVec(1)), vecChunk("t", "c.md", 0, "lost too", unitVec(2)),
	}), ports.VectorUnavailable)
	wantVecKind(t, x.Truncate(ctx, vecTestCollection, "t", "a.md", 0), ports.VectorUnavailable)
	for name, y := range map[string]*vectorindex.VectorIndex{"this index": x, "another": openAnother(t, dir)} {
		srcs, err := y.Sources(ctx, vecTestCollection, "t", "")
		if err != nil || !slices.Equal(srcs, []string{"a.md"}) {
			t.Errorf("%s after refused writes: %v, %v", name, srcs, err)
		}
		hits, err := y.Search(ctx, vecTestCollection, "t", unitVec(1), 5)
		if err != nil || len(hits) != 1 || hits[0].Content != "kept" {
			t.Errorf("%s searches %+v, %v", name, hits, err)
		}
	}
}

// openAnother opens a second index on dir, closed when the test ends.
func openAnother(t *testing.T, dir string) *vectorindex.VectorIndex {
	y, _ := mustOpenStored(t, dir, vecTestConfig())
	return y
}

// snapshotOf reads everything a tenant has, for comparing stores.
func snapshotOf(t *testing.T, x *vectorindex.VectorIndex, tenant string) []string {
	t.Helper()
	ctx := context.Background()
	srcs, err := x.Sources(ctx, vecTestCollection, tenant, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range srcs {
		h, err := x.Hashes(ctx, vecTestCollection, tenant, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range slices.Sorted(maps.Keys(h)) {
			out = append(out, fmt.Sprintf("%s#%d=%s", s, i, h[i]))
		}
	}
	hits, err := x.Search(ctx, vecTestCollection, tenant, unitVec(2), vecTestMaxK)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		out = append(out, fmt.Sprintf("hit %s %s#%d %.5f %q", h.ID, h.Source, h.Index, h.Score, h.Content))
	}
	return out
}

// TestVectorIndexReloadsWhatItServed writes, replaces, moves, truncates
// and spans tenants, then checks a reopened index serves exactly the same.
func TestVectorIndexReloadsWhatItServed(t *testing.T) {
	dir := t.TempDir()
	x, done := mustOpenStored(t, dir, vecTestConfig())
	ctx := context.Background()
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 200)
	for i := range 200 {
		c := vecChunk("t", fmt.Sprintf("doc%d.md", i%20), i/20, fmt.Sprintf("%s %d", pad, i), unitVec(i))
		if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{c}); err != nil {
			t.Fatal(err)
		}
	}
	// Replace in place, move an id to a new position, truncate, and write
	// a second tenant.
	moved := vecChunk("t", "doc1.md", 0, "moved", unitVec(9))
	moved.Source, moved.Index = "elsewhere.md", 3
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", "doc0.md", 0, "replaced", unitVec(7)), moved}); err != nil {
		t.Fatal(err)
	}
	if err := x.Truncate(ctx, vecTestCollection, "t", "doc3.md", 4); err != nil {
		t.Fatal(err)
	}
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("u", "z.md", 0, "second tenant", unitVec(5))}); err != nil {
		t.Fatal(err)
	}
	want, wantU := snapshotOf(t, x, "t"), snapshotOf(t, x, "u")
	if err := done(); err != nil {
		t.Fatal(err)
	}
	y, _ := mustOpenStored(t, dir, vecTestConfig())
	if got := snapshotOf(t, y, "t"); !slices.Equal(got, want) {
		t.Errorf("after reload:\n got %q\nwant %q", got, want)
	}
	if got := snapshotOf(t, y, "u"); !slices.Equal(got, wantU) {
		t.Errorf("tenant u after reload: %v, want %v", got, wantU)
	}
	hits, err := y.Hybrid(ctx, vecTestCollection, "t", "lorem", unitVec(0), 3, ports.HybridOptions{RRFK: 60, CandidateMultiplier: 2})
	if err != nil || len(hits) != 3 {
		t.Errorf("hybrid after reload: %v, %v", hits, err)
	}
}

// vecWriteSome creates an index in dir with a few writes and closes it.
func vecWriteSome(t *testing.T, dir string) {
	t.Helper()
	x, done := mustOpenStored(t, dir, vecTestConfig())
	for i := range 3 {
		if err := x.Upsert(context.Background(), vecTestCollection, []ports.Chunk{vecChunk("t", "a.md", i, fmt.Sprintf("chunk number %d", i), unitVec(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
}

func TestVectorIndexRefusesOtherDimensions(t *testing.T) {
	dir := t.TempDir()
	vecWriteSome(t, dir)
	cfg := vecTestConfig()
	cfg.Dimensions = vecTestDims * 2
	_, _, err := openStored(dir, cfg)
	wantVecKind(t, err, ports.VectorDimension)
}

// editStore changes the store file behind the index's back, through SQL
// on a connection of its own, as damage would.
func editStore(t *testing.T, dir string, stmts ...string) {
	t.Helper()
	store, err := sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	err = store.Write(context.Background(), func(tx *sqlite.Tx) error {
		for _, q := range stmts {
			if _, err := tx.Tx.ExecContext(context.Background(), q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestVectorIndexRefusesDamagedData: damage the store's own checks cannot
// see (quick_check covers the file's structure, not the bytes in a row) is
// the index's to catch. Each case must fail the collection's first use
// with ErrVectorCorrupt, and keep failing, never serve it smaller, empty
// or altered.
func TestVectorIndexRefusesDamagedData(t *testing.T) {
	const first = "(SELECT min(rowid) FROM vec_chunk)"
	for name, damage := range map[string][]string{
		"a flipped bit in content":  {"UPDATE vec_chunk SET content = 'chunk number 1' WHERE rowid = " + first},
		"a flipped bit in a vector": {"UPDATE vec_chunk SET embedding = x'00000000' || substr(embedding, 5) WHERE rowid = " + first},
		"a chunk under another key": {"UPDATE vec_chunk SET source = 'b.md' WHERE rowid = " + first},
		"a chunk in another tenant": {"UPDATE vec_chunk SET tenant = 'u' WHERE rowid = " + first},
		"a chunk gone":              {"DELETE FROM vec_chunk WHERE rowid = " + first},
		"a cut vector":              {"UPDATE vec_chunk SET embedding = substr(embedding, 1, 8) WHERE rowid = " + first},
		"a chunk too many":          {"INSERT INTO vec_chunk SELECT collection, tenant, source, 7, 'extra', hash, content, embedding, sum FROM vec_chunk WHERE rowid = " + first},
		"a wrong tenant count":      {"UPDATE vec_tenant SET chunks = chunks + 1", "UPDATE vec_collection SET chunks = chunks + 1"},
		"a wrong collection count":  {"UPDATE vec_collection SET chunks = chunks - 1"},
		"a chunk twice (its unique indexes gone)": {"DROP INDEX vec_chunk_pos", "DROP INDEX vec_chunk_id",
			"INSERT INTO vec_chunk SELECT * FROM vec_chunk WHERE rowid = " + first,
			"UPDATE vec_tenant SET chunks = chunks + 1", "UPDATE vec_collection SET chunks = chunks + 1"},
		"the tenant record gone":    {"DELETE FROM vec_tenant"},
		"a count beyond the limits": {"UPDATE vec_collection SET chunks = 1000000000"},
		"a tenant from the future":  {"UPDATE vec_tenant SET version = version + 100"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			vecWriteSome(t, dir)
			editStore(t, dir, damage...)
			x, _ := mustOpenStored(t, dir, vecTestConfig())
			for range 2 {
				_, err := x.Sources(context.Background(), vecTestCollection, "t", "")
				if !errors.Is(err, vectorindex.ErrVectorCorrupt) {
					t.Fatalf("got %v, want ErrVectorCorrupt", err)
				}
				wantVecKind(t, err, ports.VectorFailed)
				if strings.Contains(err.Error(), dir) || strings.Contains(fmt.Sprint(errors.Unwrap(err)), dir) {
					t.Errorf("error names the path: %v", err)
				}
			}
			// The other collection is not damaged and is served.
			if _, err := x.Sources(context.Background(), "other_chunks", "t", ""); err != nil {
				t.Errorf("an undamaged collection: %v", err)
			}
		})
	}
}

func TestVectorIndexDamagedFileIsAStartUpError(t *testing.T) {
	dir := t.TempDir()
	vecWriteSome(t, dir)
	path := filepath.Join(dir, sqlite.FileName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	clear(raw[2*4096:])
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := openStored(dir, vecTestConfig()); !errors.Is(err, sqlite.ErrCorrupt) {
		t.Fatalf("got %v, want sqlite.ErrCorrupt", err)
	}
}

// ---- SIGKILL ----

const (
	killChildEnv = "ARROWHEAD_VECTOR_KILL_CHILD"
	killDirEnv   = "ARROWHEAD_VECTOR_KILL_DIR"
	// killMinAcks is how many acknowledged writes the parent waits for
	// before it kills the child.
	killMinAcks = 60
)

// killChunks is write i of the child: document i's three chunks.
func killChunks(i int) []ports.Chunk {
	src := fmt.Sprintf("doc%05d.md", i)
	out := make([]ports.Chunk, 3)
	for j := range out {
		out[j] = vecChunk("t", src, j, fmt.Sprintf("document %d chunk %d %s", i, j, strings.Repeat("pad ", 300)), unitVec(i+j))
	}
	return out
}

// TestVectorIndexSurvivesSIGKILL re-executes the test binary as a child
// that writes to the index in a tight loop, printing each write once it is
// acknowledged, and kills it with SIGKILL. The reopened index must hold
// every acknowledged write, whole, and no torn or out-of-order one.
func TestVectorIndexSurvivesSIGKILL(t *testing.T) {
	if os.Getenv(killChildEnv) == "1" {
		killChild(os.Getenv(killDirEnv))
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestVectorIndexSurvivesSIGKILL$")
	cmd.Env = append(os.Environ(), killChildEnv+"=1", killDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := -1
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		n, ok := strings.CutPrefix(line, "acked ")
		if !ok {
			continue
		}
		if acked, err = strconv.Atoi(n); err != nil {
			t.Fatalf("child said %q", line)
		}
		if acked >= killMinAcks {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if acked < killMinAcks {
		t.Fatalf("the child acknowledged %d writes before it ended", acked+1)
	}
	x, _ := mustOpenStored(t, dir, vecTestConfig())
	ctx := context.Background()
	srcs, err := x.Sources(ctx, vecTestCollection, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	// The child may have acknowledged more than the parent read before the
	// kill; whatever landed is a prefix of its writes.
	if len(srcs) < acked+1 {
		t.Fatalf("%d documents after the kill, acknowledged %d", len(srcs), acked+1)
	}
	for i, src := range srcs {
		if want := fmt.Sprintf("doc%05d.md", i); src != want {
			t.Fatalf("document %d is %s, want %s: the writes that landed are not a prefix", i, src, want)
		}
		h, err := x.Hashes(ctx, vecTestCollection, "t", src)
		if err != nil {
			t.Fatal(err)
		}
		// A write, acknowledged or in flight, landed whole or not at all.
		want := killChunks(i)
		if len(h) != len(want) {
			t.Errorf("document %d has %d chunks, want %d", i, len(h), len(want))
			continue
		}
		for _, ch := range want {
			if h[ch.Index] != ch.Hash {
				t.Errorf("document %d chunk %d: hash %q, want %q", i, ch.Index, h[ch.Index], ch.Hash)
			}
		}
	}
	hits, err := x.Search(ctx, vecTestCollection, "t", unitVec(3), 5)
	if err != nil || len(hits) != 5 {
		t.Errorf("search after the kill: %d hits, %v", len(hits), err)
	}
}

func killChild(dir string) {
	x, _, err := openStored(dir, vecTestConfig())
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for i := 0; ; i++ {
		if err := x.Upsert(context.Background(), vecTestCollection, killChunks(i)); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Printf("acked %d\n", i)
	}
}
