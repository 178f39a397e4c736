package fs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	afs "github.com/arrowhead-go/arrowhead/adapters/fs"
	"github.com/arrowhead-go/arrowhead/adapters/repotest"
	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/ports"
)

func openRepo(t *testing.T, dir string) *afs.Repo {
	t.Helper()
	r, err := afs.OpenRepo(afs.RepoConfig{Root: dir, Names: []string{"go.mod"}, MaxFileBytes: repotest.MaxFileBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestRepoContract(t *testing.T) {
	repotest.Run(t, func(t *testing.T, dir string) ports.RepoStore {
		r := openRepo(t, dir)
		if runtime.GOOS == "linux" && !afs.HasBeneath(r) {
			t.Fatal("openat2 is not in use on Linux")
		}
		return r
	})
}

// TestRepoContractPortable runs the suite on the component-by-component
// path, which kernels without openat2 take.
func TestRepoContractPortable(t *testing.T) {
	repotest.Run(t, func(t *testing.T, dir string) ports.RepoStore {
		r := openRepo(t, dir)
		afs.WithoutBeneath(r)
		return r
	})
}

// TestRepoSessionContract runs the suite through a read session, which
// search.Walk uses: it must refuse exactly what Read refuses.
func TestRepoSessionContract(t *testing.T) {
	for _, portable := range []bool{false, true} {
		t.Run(map[bool]string{false: "openat2", true: "portable"}[portable], func(t *testing.T) {
			repotest.Run(t, func(t *testing.T, dir string) ports.RepoStore {
				r := openRepo(t, dir)
				if portable {
					afs.WithoutBeneath(r)
				}
				s := r.OpenReadSession()
				t.Cleanup(func() { s.Close() })
				return sessionStore{r, s}
			})
		})
	}
}

type sessionStore struct {
	*afs.Repo
	s search.ReadSession
}

func (s sessionStore) Read(ctx context.Context, rel string, max int64) ([]byte, ports.FileInfo, error) {
	return s.s.Read(ctx, rel, max)
}

func TestOpenRepoRefusals(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	os.WriteFile(file, []byte("x"), 0o640)
	for name, cfg := range map[string]afs.RepoConfig{
		"missing root":   {Root: filepath.Join(dir, "nope")},
		"root is a file": {Root: file},
	} {
		if _, err := afs.OpenRepo(cfg); !errors.Is(err, afs.ErrRepoRootMissing) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, cfg := range map[string]afs.RepoConfig{
		"bad extension": {Root: dir, Extensions: []string{"go"}},
		"bad name":      {Root: dir, Names: []string{"a/go.mod"}},
		"bad excluded":  {Root: dir, ExcludedDirs: []string{"a/b"}},
	} {
		if _, err := afs.OpenRepo(cfg); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nope")); !os.IsNotExist(err) {
		t.Error("OpenRepo created the missing root")
	}
}

func TestRepoDefaultsServeSeedExtensions(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.rs", "b.kt", "c.tsx", "d.exe", "e.pyc"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x\n"), 0o640)
	}
	os.MkdirAll(filepath.Join(dir, "target"), 0o750)
	os.WriteFile(filepath.Join(dir, "target", "f.rs"), []byte("x\n"), 0o640)
	r, err := afs.OpenRepo(afs.RepoConfig{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	files, _, err := r.List(context.Background(), "", 10)
	if err != nil || len(files) != 3 {
		t.Errorf("List = %+v %v, want a.rs b.kt c.tsx", files, err)
	}
}

// TestListingsAgree lists the same trees through the openat2 walk and
// the portable one: the same files, sizes and times, in the same order,
// for every prefix and limit tried, on a tree built to trip a walk
// (symlinked file and directory, a FIFO, excluded directories, a name
// sorting between a directory and its files, a path at the depth bound)
// and on the Go distribution's src/.
func TestListingsAgree(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the openat2 walk is Linux-only")
	}
	dir := t.TempDir()
	deep := filepath.Join(append([]string{dir, "deep"}, make64("d")...)...)
	for _, p := range []string{"a/x.go", "a-b.go", "a.go", "b/c/d.py", "node_modules/m.js", "src/.git/config.go", "src/keep.md", "big/z.txt",
		filepath.Join(deep[len(dir)+1:], "f.go"), filepath.Join(filepath.Dir(deep)[len(dir)+1:], "g.go"), "skip.bin"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "o.go"), []byte("o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"link.go": filepath.Join(outside, "o.go"), "linkdir": outside, "a/back": dir} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "b", "pipe.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	trees := map[string]string{"fixture": dir}
	if src := filepath.Join(runtime.GOROOT(), "src"); testing.Short() {
		t.Log("-short: the Go source tree is not listed")
	} else if _, err := os.Stat(src); err == nil {
		trees["goroot"] = src
	}
	for name, root := range trees {
		fast, portable := openRepo(t, root), openRepo(t, root)
		afs.WithoutBeneath(portable)
		for _, prefix := range []string{"", "a", "a/", "b/c", "deep", "linkdir", "a/back", "a.go", "missing", "node_modules", "net/http", "go"} {
			for _, limit := range []int{1, 3, 1000000} {
				want, wantTrunc, wantErr := portable.List(t.Context(), prefix, limit)
				got, gotTrunc, gotErr := fast.List(t.Context(), prefix, limit)
				if !errors.Is(gotErr, wantErr) || gotTrunc != wantTrunc || len(got) != len(want) {
					t.Fatalf("%s %q limit %d: %d files, %v, %v; portable %d, %v, %v", name, prefix, limit, len(got), gotTrunc, gotErr, len(want), wantTrunc, wantErr)
				}
				if name == "fixture" && prefix == "" && limit > 3 {
					var paths []string
					for _, f := range got {
						paths = append(paths, f.Path)
					}
					gPath := filepath.ToSlash(filepath.Join(filepath.Dir(deep)[len(dir)+1:], "g.go"))
					if strings.Join(paths, ",") != "a-b.go,a.go,a/x.go,b/c/d.py,big/z.txt,"+gPath+",src/keep.md" {
						t.Fatalf("the fixture lists %v", paths)
					}
				}
				for i := range want {
					if got[i].Path != want[i].Path || got[i].Size != want[i].Size || !got[i].ModTime.Equal(want[i].ModTime) {
						t.Fatalf("%s %q: file %d is %+v, portable %+v", name, prefix, i, got[i], want[i])
					}
				}
			}
		}
	}
}

func make64(name string) []string {
	parts := make([]string, afs.MaxDepth-1)
	for i := range parts {
		parts[i] = name
	}
	return parts
}
