package fs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
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
// search.StoreSource uses: it must refuse exactly what Read refuses.
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
