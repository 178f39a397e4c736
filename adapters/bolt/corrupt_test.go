package bolt_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
)

const fixturePageSize = 4096

// fixture is what writeFixture stores: sealed values in two namespaces,
// one nested bucket, small values sharing pages and large ones spilling
// onto overflow pages, plus a count per namespace, which is how an owner
// notices keys that a damaged page header hides.
func fixture() map[string]map[string]string {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte(rng.IntN(26))
		}
		return string(b)
	}
	out := map[string]map[string]string{"alpha": {}, "beta": {}}
	for i := range 60 {
		out["alpha"][fmt.Sprintf("small/%03d", i)] = word(200)
	}
	for i := range 4 {
		out["beta"][fmt.Sprintf("large/%d", i)] = word(9000)
	}
	out["beta"]["nested/x"] = word(50)
	return out
}

// writeFixture writes fixture() in several transactions and returns the
// store file's bytes.
func writeFixture(t *testing.T, dir string) []byte {
	t.Helper()
	s, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alpha", "beta"} {
		ns := namespace(t, s, name)
		values := fixture()[name]
		keys := slices.Sorted(maps.Keys(values))
		// A few transactions of up to 16 keys: enough commits to leave
		// free pages behind, few enough to keep the file small.
		for batch := range slices.Chunk(keys, 16) {
			err := ns.Update(context.Background(), func(root *bbolt.Bucket) error {
				for _, k := range batch {
					b := root
					if strings.HasPrefix(k, "nested/") {
						nb, err := root.CreateBucketIfNotExists([]byte("nested"))
						if err != nil {
							return err
						}
						b = nb
					}
					if err := b.Put([]byte(k), bolt.Seal([]byte(k), []byte(values[k]))); err != nil {
						return err
					}
					var n [8]byte
					binary.LittleEndian.PutUint64(n[:], uint64(countKeys(b)))
					if err := b.Put([]byte("~count"), n[:]); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, bolt.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func countKeys(b *bbolt.Bucket) int {
	n := 0
	_ = b.ForEach(func(k, v []byte) error {
		if v != nil && string(k) != "~count" {
			n++
		}
		return nil
	})
	return n
}

// readAll opens the store and reads every value back through Unseal,
// checking each namespace's count.
func readAll(dir string) (map[string]map[string]string, error) {
	s, err := bolt.Open(bolt.Config{Dir: dir, LockTimeout: time.Second})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	out := map[string]map[string]string{}
	for _, name := range []string{"alpha", "beta"} {
		ns, err := s.Namespace(name)
		if err != nil {
			return nil, err
		}
		got := map[string]string{}
		out[name] = got
		var read func(b *bbolt.Bucket) (int, error)
		read = func(b *bbolt.Bucket) (int, error) {
			n := 0
			err := b.ForEach(func(k, v []byte) error {
				switch {
				case v == nil:
					nb := b.Bucket(k)
					if nb == nil {
						return errors.New("nested bucket vanished")
					}
					m, err := read(nb)
					n += m
					return err
				case string(k) == "~count":
					return nil
				}
				val, err := bolt.Unseal(k, v)
				if err != nil {
					return err
				}
				got[string(k)] = string(val)
				n++
				return nil
			})
			return n, err
		}
		err = ns.View(context.Background(), func(b *bbolt.Bucket) error {
			n, err := read(b)
			if err != nil {
				return err
			}
			want := 0
			for _, bb := range []*bbolt.Bucket{b, b.Bucket([]byte("nested"))} {
				if bb == nil {
					continue
				}
				c := bb.Get([]byte("~count"))
				if len(c) != 8 {
					return fmt.Errorf("%w: count missing", bolt.ErrCorrupt)
				}
				want += int(binary.LittleEndian.Uint64(c))
			}
			if n != want {
				return fmt.Errorf("%w: %d keys, counted %d", bolt.ErrCorrupt, n, want)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// highWater is the page count the newest commit of raw uses: the file
// past it is unallocated.
func highWater(raw []byte) int {
	at := func(page, off int) uint64 { return binary.LittleEndian.Uint64(raw[page*fixturePageSize+16+off:]) }
	newest := 0
	if at(1, 48) > at(0, 48) {
		newest = 1
	}
	return int(at(newest, 40))
}

func sameData(a, b map[string]map[string]string) bool {
	return maps.EqualFunc(a, b, func(x, y map[string]string) bool { return maps.Equal(x, y) })
}

func wantCorrupt(t *testing.T, dir string, err error) {
	t.Helper()
	if !errors.Is(err, bolt.ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
	if strings.Contains(err.Error(), dir) {
		t.Errorf("error names the path: %v", err)
	}
}

func TestDamagedFilesAreRefused(t *testing.T) {
	for name, damage := range map[string]func([]byte) []byte{
		"garbage": func(b []byte) []byte {
			r := rand.New(rand.NewPCG(3, 4))
			g := make([]byte, len(b))
			for i := range g {
				g[i] = byte(r.Uint32())
			}
			return g
		},
		"text":              func([]byte) []byte { return []byte(strings.Repeat("not a database at all ", 1000)) },
		"shorter than meta": func(b []byte) []byte { return b[:100] },
		"one page":          func(b []byte) []byte { return b[:fixturePageSize] },
		"cut in half":       func(b []byte) []byte { return b[:highWater(b)/2*fixturePageSize] },
		"last page missing": func(b []byte) []byte { return b[:(highWater(b)-1)*fixturePageSize] },
		"both meta pages": func(b []byte) []byte {
			b[16+4] ^= 1
			b[fixturePageSize+16+4] ^= 1
			return b
		},
		"data pages zeroed": func(b []byte) []byte {
			clear(b[4*fixturePageSize : 8*fixturePageSize])
			return b
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			good := writeFixture(t, dir)
			if err := os.WriteFile(filepath.Join(dir, bolt.FileName), damage(bytes.Clone(good)), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := readAll(dir)
			wantCorrupt(t, dir, err)
		})
	}
}

// TestDamagedNewestMetaFallsBackToThePreviousCommit: the newest meta page
// is the last thing a commit writes, so a damaged one is the trace of a
// crash during a commit that was never acknowledged. bbolt opens at the
// commit before it, whole.
func TestDamagedNewestMetaFallsBackToThePreviousCommit(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ns := namespace(t, s, "alpha")
	put(t, ns, "first", "1")
	put(t, ns, "second", "2")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, bolt.FileName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The meta's txid is at offset 16 (page header) + 48; the newest meta
	// has the larger one.
	txid := func(page int) uint64 { return binary.LittleEndian.Uint64(raw[page*fixturePageSize+16+48:]) }
	newest := 0
	if txid(1) > txid(0) {
		newest = 1
	}
	raw[newest*fixturePageSize+16+8] ^= 1 // its page size field: fails the checksum
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir)
	ns = namespace(t, s, "alpha")
	if v, ok := get(t, ns, "first"); !ok || v != "1" {
		t.Errorf("first = %q, %v", v, ok)
	}
	if _, ok := get(t, ns, "second"); ok {
		t.Error("the commit of the damaged meta is still visible")
	}
}

// TestEveryFlippedByteIsCaughtOrHarmless flips one byte at a time across
// every page but the two meta pages (above): each damaged file must fail
// with ErrCorrupt, at Open or when read, or read back exactly as written
// (the byte was in free space). It must never crash the process, hang, or
// read back different or fewer values.
func TestEveryFlippedByteIsCaughtOrHarmless(t *testing.T) {
	dir := t.TempDir()
	good := writeFixture(t, dir)
	want := fixture()
	if got, err := readAll(dir); err != nil || !sameData(got, want) {
		t.Fatalf("undamaged: %v", err)
	}
	path := filepath.Join(dir, bolt.FileName)
	var offsets []int
	for page := 2; page*fixturePageSize < len(good); page++ {
		base := page * fixturePageSize
		for i := range 16 { // the page header: id, flags, count, overflow
			offsets = append(offsets, base+i)
		}
		for i := 16; i < fixturePageSize; i += 509 {
			offsets = append(offsets, base+i)
		}
	}
	caught, harmless := 0, 0
	for _, off := range offsets {
		damaged := bytes.Clone(good)
		damaged[off] ^= 0x5a
		if err := os.WriteFile(path, damaged, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readAll(dir)
		switch {
		case errors.Is(err, bolt.ErrCorrupt):
			caught++
		case err != nil:
			t.Errorf("byte %d: %v, want ErrCorrupt", off, err)
		case !sameData(got, want):
			t.Errorf("byte %d: read back different data without an error", off)
		default:
			harmless++
		}
	}
	t.Logf("%d flips: %d caught, %d in free space", len(offsets), caught, harmless)
	if caught == 0 {
		t.Error("no damage was caught")
	}
}
