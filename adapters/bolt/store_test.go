package bolt_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

func openStore(t *testing.T, dir string) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(bolt.Config{Dir: dir, LockTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func namespace(t *testing.T, s *bolt.Store, name string) *bolt.Namespace {
	t.Helper()
	ns, err := s.Namespace(name)
	if err != nil {
		t.Fatalf("Namespace(%s): %v", name, err)
	}
	return ns
}

func put(t *testing.T, ns *bolt.Namespace, k, v string) {
	t.Helper()
	err := ns.Update(context.Background(), func(b *bbolt.Bucket) error { return b.Put([]byte(k), []byte(v)) })
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func get(t *testing.T, ns *bolt.Namespace, k string) (string, bool) {
	t.Helper()
	var v []byte
	err := ns.View(context.Background(), func(b *bbolt.Bucket) error {
		v = bytes.Clone(b.Get([]byte(k)))
		return nil
	})
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	return string(v), v != nil
}

func TestUpdateIsDurableAndNamespacesAreSeparate(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	a, b := namespace(t, s, "alpha"), namespace(t, s, "beta")
	put(t, a, "k", "in alpha")
	put(t, b, "k", "in beta")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir)
	a, b = namespace(t, s, "alpha"), namespace(t, s, "beta")
	if v, _ := get(t, a, "k"); v != "in alpha" {
		t.Errorf("alpha/k = %q", v)
	}
	if v, _ := get(t, b, "k"); v != "in beta" {
		t.Errorf("beta/k = %q", v)
	}
	st, err := os.Stat(filepath.Join(dir, bolt.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("store file mode %v, want no group or other access", st.Mode().Perm())
	}
}

func TestFailedUpdateChangesNothing(t *testing.T) {
	s := openStore(t, t.TempDir())
	ns := namespace(t, s, "alpha")
	put(t, ns, "k", "before")
	boom := errors.New("boom")
	err := ns.Update(context.Background(), func(b *bbolt.Bucket) error {
		if err := b.Put([]byte("k"), []byte("after")); err != nil {
			return err
		}
		if err := b.Put([]byte("other"), []byte("x")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update: %v, want fn's error", err)
	}
	if v, _ := get(t, ns, "k"); v != "before" {
		t.Errorf("k = %q after a failed update", v)
	}
	if _, ok := get(t, ns, "other"); ok {
		t.Error("a failed update left a key")
	}
}

func TestNamespaceClaims(t *testing.T) {
	s := openStore(t, t.TempDir())
	namespace(t, s, "vectors")
	if _, err := s.Namespace("vectors"); !errors.Is(err, bolt.ErrNamespace) {
		t.Errorf("second claim: %v, want ErrNamespace", err)
	}
	for _, bad := range []string{"", "Vectors", "1x", "a-b", strings.Repeat("a", 64), "a\x00"} {
		if _, err := s.Namespace(bad); !errors.Is(err, bolt.ErrNamespace) {
			t.Errorf("Namespace(%q): %v, want ErrNamespace", bad, err)
		}
	}
}

func TestCancelledContextStartsNoTransaction(t *testing.T) {
	s := openStore(t, t.TempDir())
	ns := namespace(t, s, "alpha")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err := ns.Update(ctx, func(*bbolt.Bucket) error { called = true; return nil })
	if !errors.Is(err, context.Canceled) || called {
		t.Errorf("Update on a cancelled context: %v, fn called %v", err, called)
	}
	err = ns.View(ctx, func(*bbolt.Bucket) error { called = true; return nil })
	if !errors.Is(err, context.Canceled) || called {
		t.Errorf("View on a cancelled context: %v, fn called %v", err, called)
	}
}

func TestClosedStore(t *testing.T) {
	s, err := bolt.Open(bolt.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, s, "alpha")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	err = ns.Update(context.Background(), func(*bbolt.Bucket) error { return nil })
	if !errors.Is(err, bolt.ErrClosed) {
		t.Errorf("Update after Close: %v, want ErrClosed", err)
	}
}

func TestConcurrentWritersAndReaders(t *testing.T) {
	s := openStore(t, t.TempDir())
	ns := namespace(t, s, "alpha")
	put(t, ns, "a", "0")
	put(t, ns, "b", "0")
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 25 {
				v := []byte(fmt.Sprintf("%d-%d", w, i))
				// Both keys change in one transaction: a reader never sees
				// one without the other.
				err := ns.Update(context.Background(), func(b *bbolt.Bucket) error {
					if err := b.Put([]byte("a"), v); err != nil {
						return err
					}
					return b.Put([]byte("b"), v)
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range 50 {
				err := ns.View(context.Background(), func(b *bbolt.Bucket) error {
					if a, bb := b.Get([]byte("a")), b.Get([]byte("b")); !bytes.Equal(a, bb) {
						return fmt.Errorf("torn read: %q vs %q", a, bb)
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestSeal(t *testing.T) {
	sealed := bolt.Seal([]byte("key"), []byte("value"))
	if v, err := bolt.Unseal([]byte("key"), sealed); err != nil || string(v) != "value" {
		t.Fatalf("Unseal = %q, %v", v, err)
	}
	if _, err := bolt.Unseal([]byte("other"), sealed); !errors.Is(err, bolt.ErrCorrupt) {
		t.Errorf("under another key: %v", err)
	}
	for i := range sealed {
		damaged := bytes.Clone(sealed)
		damaged[i] ^= 0x10
		if _, err := bolt.Unseal([]byte("key"), damaged); !errors.Is(err, bolt.ErrCorrupt) {
			t.Errorf("byte %d flipped: %v", i, err)
		}
	}
	if _, err := bolt.Unseal([]byte("key"), sealed[:3]); !errors.Is(err, bolt.ErrCorrupt) {
		t.Errorf("cut short: %v", err)
	}
	if v, err := bolt.Unseal(nil, bolt.Seal(nil, nil)); err != nil || len(v) != 0 {
		t.Errorf("empty: %q, %v", v, err)
	}
}

func TestConfigFromSettings(t *testing.T) {
	if got := bolt.ConfigFromSettings(settings.Settings{DataDir: "/var/lib/ah"}); got.Dir != "/var/lib/ah" {
		t.Errorf("Dir = %q", got.Dir)
	}
	if _, err := bolt.Open(bolt.Config{}); err == nil || !strings.Contains(err.Error(), "ARROWHEAD_DATA_DIR") {
		t.Errorf("no directory: %v", err)
	}
}

// ---- the lock ----

func wantLocked(t *testing.T, dir string, err error) {
	t.Helper()
	if !errors.Is(err, bolt.ErrLocked) {
		t.Fatalf("Open of a held file: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "ARROWHEAD_DATA_DIR") {
		t.Errorf("error does not name the variable: %v", err)
	}
	if strings.Contains(err.Error(), dir) {
		t.Errorf("error names the path: %v", err)
	}
}

func TestSecondOpenInTheProcessIsLocked(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	_, err := bolt.Open(bolt.Config{Dir: dir, LockTimeout: 20 * time.Millisecond})
	wantLocked(t, dir, err)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	openStore(t, dir)
}

const (
	holdChildEnv = "ARROWHEAD_BOLT_HOLD_CHILD"
	holdDirEnv   = "ARROWHEAD_BOLT_HOLD_DIR"
)

// TestAnotherProcessHoldingTheFileIsLocked re-executes the test binary as
// a child that opens the store and holds it until its stdin closes.
func TestAnotherProcessHoldingTheFileIsLocked(t *testing.T) {
	if os.Getenv(holdChildEnv) == "1" {
		s, err := bolt.Open(bolt.Config{Dir: os.Getenv(holdDirEnv)})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("holding")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		_ = s.Close()
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAnotherProcessHoldingTheFileIsLocked$")
	cmd.Env = append(os.Environ(), holdChildEnv+"=1", holdDirEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "holding" {
		t.Fatalf("child: %q", line)
	}
	_, err = bolt.Open(bolt.Config{Dir: dir, LockTimeout: 50 * time.Millisecond})
	wantLocked(t, dir, err)
	// Once the holder exits, the file opens.
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	openStore(t, dir)
}

// Batch commits every concurrent caller's write, and a failing caller's
// error is its own: the others still commit.
func TestBatchCommitsConcurrentWrites(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ns := namespace(t, s, "batch")
	refused := errors.New("refused")
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = ns.Batch(context.Background(), func(b *bbolt.Bucket) error {
				if i == 3 {
					return refused
				}
				return b.Put([]byte(fmt.Sprintf("k%02d", i)), []byte("v"))
			})
		}(i)
	}
	wg.Wait()
	n := 0
	err := ns.View(context.Background(), func(b *bbolt.Bucket) error { n = b.Stats().KeyN; return nil })
	if err != nil || n != 15 || !errors.Is(errs[3], refused) {
		t.Fatalf("keys = %d, err = %v, failing caller got %v", n, err, errs[3])
	}
	for i, err := range errs {
		if i != 3 && err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ns.Batch(cancelled, func(*bbolt.Bucket) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Batch: %v", err)
	}
}

// BenchmarkBatchWriters measures acknowledged durable writes per second
// through Batch for one writer (each write waits for its own commit) and
// for eight (group commit).
func BenchmarkBatchWriters(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s, err := bolt.Open(bolt.Config{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ns, err := s.Namespace("bench")
			if err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						key := []byte(fmt.Sprintf("k%09d", i))
						if err := ns.Batch(context.Background(), func(bk *bbolt.Bucket) error { return bk.Put(key, key) }); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
		})
	}
}
