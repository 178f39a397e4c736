// Package repotest is the contract suite of ports.RepoStore: one set of
// tests every repository store must pass. An adapter's tests call Run with
// a factory that serves a given directory under the seed's defaults (the
// default extensions and excluded directories, "go.mod" as an exact name,
// a per-file cap of MaxFileBytes).
package repotest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/ports"
)

// MaxFileBytes is the per-file cap the factory must configure.
const MaxFileBytes = 4096

// Factory returns a store serving dir, which Run has filled.
type Factory func(t *testing.T, dir string) ports.RepoStore

// Run runs the contract suite.
func Run(t *testing.T, open Factory) {
	t.Run("ReadsText", func(t *testing.T) { readsText(t, open) })
	t.Run("ExcludedDirectoriesUnreachable", func(t *testing.T) { excludedUnreachable(t, open) })
	t.Run("ListPrunesAndOrders", func(t *testing.T) { listPrunesAndOrders(t, open) })
	t.Run("ListPrefixAndLimit", func(t *testing.T) { listPrefixAndLimit(t, open) })
	t.Run("RefusesBinary", func(t *testing.T) { refusesBinary(t, open) })
	t.Run("RefusesOversize", func(t *testing.T) { refusesOversize(t, open) })
	t.Run("RefusesSymlinks", func(t *testing.T) { refusesSymlinks(t, open) })
	t.Run("RefusesTraversal", func(t *testing.T) { refusesTraversal(t, open) })
	t.Run("RefusesOtherExtensions", func(t *testing.T) { refusesOtherExtensions(t, open) })
	t.Run("WalkPathsAgreesWithList", func(t *testing.T) { walkPathsAgreesWithList(t, open) })
	t.Run("ErrorsCarryNoPath", func(t *testing.T) { errorsCarryNoPath(t, open) })
	t.Run("ReadOnly", func(t *testing.T) { readOnly(t, open) })
}

// fixture is the tree every subtest starts from.
var fixture = map[string]string{
	"go.mod":                       "module example.com/m\n",
	"main.go":                      "package main\n\nfunc main() {}\n",
	"README.md":                    "# readme\n",
	"src/app.py":                   "def run():\n    return 1\n",
	"src/lib/util.py":              "X = 1\n",
	"src/lib-old/util.py":          "Y = 2\n",
	"notes.bin":                    "not an allowed extension\n",
	".git/config":                  "[remote \"origin\"]\nurl = https://token@example.com/x.git\n",
	".git/hooks/pre-commit.sh":     "#!/bin/sh\n",
	"node_modules/left-pad/x.js":   "module.exports = 1\n",
	"pkg/node_modules/inner/y.js":  "module.exports = 2\n",
	"pkg/__pycache__/m.py":         "cached = 1\n",
	"pkg/ok.js":                    "export const ok = 1\n",
	"vendor-ish/build/out.txt":     "built\n",
	"deep/a/b/c/d/e/f/g/leaf.txt":  "leaf\n",
	"src/lib/zz_last.toml":         "k = 1\n",
	"src/lib/sub/inner.yaml":       "a: 1\n",
	"src/lib/sub/inner-other.yaml": "b: 2\n",
}

func build(t *testing.T, open Factory) (ports.RepoStore, string) {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range fixture {
		write(t, dir, rel, []byte(content))
	}
	return open(t, dir), dir
}

func write(t *testing.T, dir, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o640); err != nil {
		t.Fatal(err)
	}
}

func paths(files []ports.FileInfo) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

func readsText(t *testing.T, open Factory) {
	s, _ := build(t, open)
	ctx := context.Background()
	data, info, err := s.Read(ctx, "src/app.py", 0)
	if err != nil || string(data) != fixture["src/app.py"] || info.Path != "src/app.py" || info.Size != int64(len(data)) {
		t.Fatalf("Read = %q %+v %v", data, info, err)
	}
	if _, _, err := s.Read(ctx, "./src//app.py", 0); err != nil {
		t.Errorf("a non-canonical spelling of a served path: %v", err)
	}
	if _, _, err := s.Read(ctx, "go.mod", 0); err != nil {
		t.Errorf("go.mod is an exact name: %v", err)
	}
	st, err := s.Stat(ctx, "main.go")
	if err != nil || st.Size != int64(len(fixture["main.go"])) || st.Path != "main.go" {
		t.Errorf("Stat = %+v %v", st, err)
	}
	if _, err := s.Stat(ctx, "missing.go"); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("Stat of a missing file = %v", err)
	}
	if _, _, err := s.Read(ctx, "src", 0); err == nil {
		t.Error("a directory was read as a file")
	}
}

func excludedUnreachable(t *testing.T, open Factory) {
	s, _ := build(t, open)
	ctx := context.Background()
	for _, p := range []string{".git/config", ".git/hooks/pre-commit.sh", "node_modules/left-pad/x.js",
		"pkg/node_modules/inner/y.js", "pkg/__pycache__/m.py", "vendor-ish/build/out.txt",
		".GIT/config", "Node_Modules/left-pad/x.js", "./.git/config", "src/../.git/config"} {
		if _, _, err := s.Read(ctx, p, 0); err == nil {
			t.Errorf("Read(%q) reached an excluded directory", p)
		}
		if _, err := s.Stat(ctx, p); err == nil {
			t.Errorf("Stat(%q) reached an excluded directory", p)
		}
	}
	for _, prefix := range []string{".git", ".git/", "node_modules", "pkg/node_modules/", "vendor-ish/build"} {
		files, _, err := s.List(ctx, prefix, 100)
		if len(files) != 0 {
			t.Errorf("List(%q) = %v, %v", prefix, paths(files), err)
		}
	}
}

func listPrunesAndOrders(t *testing.T, open Factory) {
	s, _ := build(t, open)
	files, truncated, err := s.List(context.Background(), "", 100)
	if err != nil || truncated {
		t.Fatalf("List = %v %v", truncated, err)
	}
	want := []string{"README.md", "deep/a/b/c/d/e/f/g/leaf.txt", "go.mod", "main.go", "pkg/ok.js",
		"src/app.py", "src/lib-old/util.py", "src/lib/sub/inner-other.yaml", "src/lib/sub/inner.yaml",
		"src/lib/util.py", "src/lib/zz_last.toml"}
	if got := paths(files); !slices.Equal(got, want) {
		t.Errorf("List = %v\nwant %v", got, want)
	}
	if !slices.IsSortedFunc(paths(files), strings.Compare) {
		t.Error("List is not in lexical order")
	}
}

func listPrefixAndLimit(t *testing.T, open Factory) {
	s, _ := build(t, open)
	ctx := context.Background()
	cases := map[string][]string{
		"src/lib":        {"src/lib/sub/inner-other.yaml", "src/lib/sub/inner.yaml", "src/lib/util.py", "src/lib/zz_last.toml"},
		"src/lib/":       {"src/lib/sub/inner-other.yaml", "src/lib/sub/inner.yaml", "src/lib/util.py", "src/lib/zz_last.toml"},
		"src/app.py":     {"src/app.py"},
		"src/ap":         nil,
		"missing/":       nil,
		"notes.bin":      nil,
		"./src/lib/sub/": {"src/lib/sub/inner-other.yaml", "src/lib/sub/inner.yaml"},
	}
	for prefix, want := range cases {
		files, _, err := s.List(ctx, prefix, 100)
		if err != nil || !slices.Equal(paths(files), want) {
			t.Errorf("List(%q) = %v %v, want %v", prefix, paths(files), err, want)
		}
	}
	files, truncated, err := s.List(ctx, "", 3)
	if err != nil || !truncated || len(files) != 3 {
		t.Errorf("List limit 3 = %v %v %v", paths(files), truncated, err)
	}
	if _, _, err := s.List(ctx, "", 0); err == nil {
		t.Error("a zero limit was accepted")
	}
}

func refusesBinary(t *testing.T, open Factory) {
	dir := t.TempDir()
	write(t, dir, "bin.go", []byte("package x\x00\x01\x02"))
	write(t, dir, "late.py", append([]byte(strings.Repeat("x = 1\n", 500)), 0))
	write(t, dir, "utf16.txt", []byte{0xff, 0xfe, 'h', 0, 'i', 0})
	write(t, dir, "text.txt", []byte("caf\xc3\xa9\n"))
	s := open(t, dir)
	ctx := context.Background()
	for _, p := range []string{"bin.go", "late.py", "utf16.txt"} {
		if _, _, err := s.Read(ctx, p, 0); !errors.Is(err, ports.ErrBinary) {
			t.Errorf("Read(%q) = %v, want ErrBinary", p, err)
		}
	}
	if _, _, err := s.Read(ctx, "text.txt", 0); err != nil {
		t.Errorf("UTF-8 text refused: %v", err)
	}
}

func refusesOversize(t *testing.T, open Factory) {
	dir := t.TempDir()
	write(t, dir, "big.txt", []byte(strings.Repeat("a", MaxFileBytes+1)))
	write(t, dir, "edge.txt", []byte(strings.Repeat("a", MaxFileBytes)))
	s := open(t, dir)
	ctx := context.Background()
	if _, _, err := s.Read(ctx, "big.txt", 0); !errors.Is(err, ports.ErrTooLarge) {
		t.Errorf("over the store cap = %v", err)
	}
	if _, _, err := s.Read(ctx, "big.txt", 1<<40); !errors.Is(err, ports.ErrTooLarge) {
		t.Errorf("a caller cap cannot raise the store's: %v", err)
	}
	if _, _, err := s.Read(ctx, "edge.txt", 0); err != nil {
		t.Errorf("at the cap = %v", err)
	}
	if _, _, err := s.Read(ctx, "edge.txt", 10); !errors.Is(err, ports.ErrTooLarge) {
		t.Errorf("over the caller cap = %v", err)
	}
}

func refusesSymlinks(t *testing.T, open Factory) {
	dir := t.TempDir()
	outside := t.TempDir()
	write(t, outside, "secret.txt", []byte("secret\n"))
	write(t, dir, "real/in.txt", []byte("in\n"))
	links := map[string]string{
		"out.txt":       filepath.Join(outside, "secret.txt"),
		"outdir":        outside,
		"inner.txt":     filepath.Join(dir, "real", "in.txt"),
		"innerdir":      filepath.Join(dir, "real"),
		"real/rel.txt":  "in.txt",
		"real/up.txt":   "../real/in.txt",
		"dangling.txt":  filepath.Join(dir, "nowhere.txt"),
		"gitlink":       filepath.Join(dir, ".git"),
		"real/loop.txt": "loop.txt",
	}
	write(t, dir, ".git/config", []byte("[core]\n"))
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	s := open(t, dir)
	ctx := context.Background()
	for _, p := range []string{"out.txt", "outdir/secret.txt", "inner.txt", "innerdir/in.txt", "real/rel.txt",
		"real/up.txt", "dangling.txt", "gitlink/config", "real/loop.txt"} {
		data, _, err := s.Read(ctx, p, 0)
		if err == nil {
			t.Errorf("Read(%q) followed a symlink: %q", p, data)
		}
		if _, err := s.Stat(ctx, p); err == nil {
			t.Errorf("Stat(%q) followed a symlink", p)
		}
	}
	files, _, err := s.List(ctx, "", 100)
	if err != nil || !slices.Equal(paths(files), []string{"real/in.txt"}) {
		t.Errorf("List = %v %v, want only the real file", paths(files), err)
	}
	for _, prefix := range []string{"outdir", "innerdir/", "gitlink"} {
		if files, _, _ := s.List(ctx, prefix, 100); len(files) != 0 {
			t.Errorf("List(%q) followed a symlink: %v", prefix, paths(files))
		}
	}
}

func refusesTraversal(t *testing.T, open Factory) {
	s, dir := build(t, open)
	write(t, filepath.Dir(dir), "sibling.txt", []byte("outside\n"))
	ctx := context.Background()
	for _, p := range []string{"../sibling.txt", "/etc/passwd", "src/../../sibling.txt", "..", "",
		"src\\app.py", "C:/x.txt", "src/app.py\x00.txt", "\u202esrc/app.py", dir + "/main.go"} {
		if data, _, err := s.Read(ctx, p, 0); err == nil {
			t.Errorf("Read(%q) = %q", p, data)
		}
	}
	for _, prefix := range []string{"../", "/", "/etc", "src/../../"} {
		if files, _, err := s.List(ctx, prefix, 10); err == nil && len(files) > 0 {
			t.Errorf("List(%q) = %v", prefix, paths(files))
		}
	}
}

func refusesOtherExtensions(t *testing.T, open Factory) {
	s, dir := build(t, open)
	write(t, dir, "Main.GO", []byte("package main\n"))
	write(t, dir, ".py", []byte("x = 1\n"))
	write(t, dir, "Makefile", []byte("all:\n"))
	write(t, dir, "sub/go.mod.bak", []byte("module x\n"))
	ctx := context.Background()
	// A name outside the lists is refused as a type, decided from the
	// name alone: an absent file of that type gets the same answer, so the
	// refusal says nothing about existence.
	for _, p := range []string{"notes.bin", "Main.GO", ".py", "Makefile", "sub/go.mod.bak", "absent.bin", "no/such/dir/x.exe"} {
		if _, _, err := s.Read(ctx, p, 0); !errors.Is(err, ports.ErrFileType) || errors.Is(err, ports.ErrNotFound) {
			t.Errorf("Read(%q) = %v, want ErrFileType", p, err)
		}
		if _, err := s.Stat(ctx, p); !errors.Is(err, ports.ErrFileType) {
			t.Errorf("Stat(%q) = %v, want ErrFileType", p, err)
		}
	}
	// An excluded directory still hides what it holds, whatever its type.
	for _, p := range []string{".git/config", "node_modules/left-pad/x.js"} {
		if _, _, err := s.Read(ctx, p, 0); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("Read(%q) = %v, want ErrNotFound", p, err)
		}
	}
}

func errorsCarryNoPath(t *testing.T, open Factory) {
	s, dir := build(t, open)
	ctx := context.Background()
	probe := "src/zz-unique-probe.py"
	for _, p := range []string{probe, "../" + probe, ".git/" + probe, probe + ".bin"} {
		_, _, err := s.Read(ctx, p, 0)
		if err == nil {
			t.Fatalf("Read(%q) succeeded", p)
		}
		if strings.Contains(err.Error(), "zz-unique-probe") || strings.Contains(err.Error(), dir) {
			t.Errorf("error %q echoes the path", err)
		}
	}
}

func readOnly(t *testing.T, open Factory) {
	s, dir := build(t, open)
	if _, ok := s.(interface {
		Write(context.Context, string, []byte, ports.WriteMode) (ports.WriteResult, error)
	}); ok {
		t.Error("the repository store has a write method")
	}
	before := snapshot(t, dir)
	ctx := context.Background()
	s.List(ctx, "", 1000)
	for rel := range fixture {
		s.Read(ctx, rel, 0)
		s.Stat(ctx, rel)
	}
	if after := snapshot(t, dir); !slices.Equal(before, after) {
		t.Errorf("reading changed the tree:\n%v\n%v", before, after)
	}
}

func snapshot(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, p+" "+info.Mode().String()+" "+info.ModTime().String())
		return nil
	})
	return out
}

// walkPathsAgreesWithList holds a store that streams its listing
// (search.Walker) to List's answer: the same paths in the same order for
// every prefix, a file prefix included, and a stop honoured at once.
func walkPathsAgreesWithList(t *testing.T, open Factory) {
	s, _ := build(t, open)
	w, ok := s.(search.Walker)
	if !ok {
		t.Skip("the store does not stream its listing")
	}
	ctx := context.Background()
	for _, prefix := range []string{"", "src", "src/", "src/lib", "src/lib/util.py", "pkg", ".git", "absent", "node_modules/"} {
		files, _, err := s.List(ctx, prefix, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var walked []string
		if err := w.WalkPaths(ctx, prefix, func(p string) bool { walked = append(walked, p); return false }); err != nil {
			t.Fatal(err)
		}
		if want := paths(files); !slices.Equal(walked, want) {
			t.Errorf("WalkPaths(%q) = %v, List = %v", prefix, walked, want)
		}
	}
	var first []string
	if err := w.WalkPaths(ctx, "", func(p string) bool { first = append(first, p); return len(first) == 2 }); err != nil || len(first) != 2 {
		t.Errorf("a stop after two paths: %v %v", first, err)
	}
	if err := w.WalkPaths(ctx, "../", func(string) bool { return false }); !errors.Is(err, ports.ErrOutsideJail) {
		t.Errorf("WalkPaths(../) = %v", err)
	}
}
