package inmem_test

import (
	"bufio"
	"bytes"
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

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/inmem"
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

// TestVectorIndexFailedWriteChangesNothing: a write the store refuses
// (here: the store was closed under the index) is not applied in memory.
func TestVectorIndexFailedWriteChangesNothing(t *testing.T) {
	dir := t.TempDir()
	store, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := store.Namespace(inmem.VectorNamespace)
	if err != nil {
		t.Fatal(err)
	}
	cfg := vecTestConfig()
	cfg.Store = ns
	x := openVecIndex(t, cfg)
	ctx := context.Background()
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", "a.md", 0, "kept", unitVec(0))}); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	wantVecKind(t, x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", "b.md", 0, "lost", unitVec(1))}), ports.VectorUnavailable)
	wantVecKind(t, x.Truncate(ctx, vecTestCollection, "t", "a.md", 0), ports.VectorUnavailable)
	srcs, err := x.Sources(ctx, vecTestCollection, "t", "")
	if err != nil || !slices.Equal(srcs, []string{"a.md"}) {
		t.Errorf("after refused writes: %v, %v", srcs, err)
	}
}

// snapshotOf reads everything a tenant has, for comparing stores.
func snapshotOf(t *testing.T, x *inmem.VectorIndex, tenant string) []string {
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

// editStore changes the store file behind the index's back, through bbolt
// directly, as damage would.
func editStore(t *testing.T, dir string, fn func(coll *bbolt.Bucket) error) {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, bolt.FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error {
		return fn(tx.Bucket([]byte(inmem.VectorNamespace)).Bucket([]byte(vecTestCollection)))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestVectorIndexRefusesDamagedData: damage the store's own checks cannot
// see (bbolt checksums only its meta pages) is the index's to catch. Each
// case must fail at start-up with ErrVectorCorrupt, never open as a
// smaller or empty index. Damage to the file's structure is the store's
// (adapters/bolt's corruption tests): it fails the store's Open.
func TestVectorIndexRefusesDamagedData(t *testing.T) {
	firstChunk := func(coll *bbolt.Bucket) (k, v []byte) {
		k, v = coll.Bucket([]byte("chunks")).Cursor().First()
		return bytes.Clone(k), bytes.Clone(v)
	}
	for name, damage := range map[string]func(coll *bbolt.Bucket) error{
		"a flipped byte in a chunk": func(coll *bbolt.Bucket) error {
			k, v := firstChunk(coll)
			v[len(v)/2] ^= 1
			return coll.Bucket([]byte("chunks")).Put(k, v)
		},
		"a chunk under another key": func(coll *bbolt.Bucket) error {
			k, v := firstChunk(coll)
			k[0] ^= 1
			return coll.Bucket([]byte("chunks")).Put(k, v)
		},
		"a chunk gone": func(coll *bbolt.Bucket) error {
			k, _ := firstChunk(coll)
			return coll.Bucket([]byte("chunks")).Delete(k)
		},
		"a cut chunk": func(coll *bbolt.Bucket) error {
			k, v := firstChunk(coll)
			return coll.Bucket([]byte("chunks")).Put(k, v[:len(v)-9])
		},
		"a damaged meta record": func(coll *bbolt.Bucket) error {
			m := bytes.Clone(coll.Get([]byte("meta")))
			m[8] ^= 1
			return coll.Put([]byte("meta"), m)
		},
		"the meta record gone":  func(coll *bbolt.Bucket) error { return coll.Delete([]byte("meta")) },
		"the chunk bucket gone": func(coll *bbolt.Bucket) error { return coll.DeleteBucket([]byte("chunks")) },
		"a future format": func(coll *bbolt.Bucket) error {
			m, err := bolt.Unseal([]byte("meta"), coll.Get([]byte("meta")))
			if err != nil {
				return err
			}
			m = bytes.Clone(m)
			m[0] = 9
			return coll.Put([]byte("meta"), bolt.Seal([]byte("meta"), m))
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			vecWriteSome(t, dir)
			editStore(t, dir, damage)
			_, _, err := openStored(dir, vecTestConfig())
			if !errors.Is(err, inmem.ErrVectorCorrupt) {
				t.Fatalf("got %v, want ErrVectorCorrupt", err)
			}
			wantVecKind(t, err, ports.VectorFailed)
			if strings.Contains(err.Error(), dir) || strings.Contains(fmt.Sprint(errors.Unwrap(err)), dir) {
				t.Errorf("error names the path: %v", err)
			}
		})
	}
}

func TestVectorIndexDamagedFileIsAStartUpError(t *testing.T) {
	dir := t.TempDir()
	vecWriteSome(t, dir)
	path := filepath.Join(dir, bolt.FileName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	clear(raw[2*4096:])
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := openStored(dir, vecTestConfig()); !errors.Is(err, bolt.ErrCorrupt) {
		t.Fatalf("got %v, want bolt.ErrCorrupt", err)
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
