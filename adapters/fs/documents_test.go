package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

// corpus builds a document root and a directory outside it, returning both.
// Layout (relative to root):
//
//	notes/a.md, notes/b.txt, notes/sub/c.json   documents
//	notes-evil/x.md                              a sibling sharing a name prefix
//	a-b.md, a/x.md                               ordering: "a-b.md" < "a/x.md"
//	upper.MD, image.png, noext, .md              not documents
//	big.md (100 bytes)                           size checks
//	escape.md -> outside/secret.md               symlink out
//	escapedir -> outside                         directory symlink out
//	inside.md -> notes/a.md                      symlink in
//	insidedir -> notes                           directory symlink in
//	notes/deep.md -> ../../../../etc/passwd      relative symlink out
//	.arrowhead-tmp-leftover                      a stale temp file
func corpus(t *testing.T) (root, outside string) {
	t.Helper()
	outside = t.TempDir()
	root = filepath.Join(t.TempDir(), "docs")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		must(os.MkdirAll(filepath.Dir(p), 0o750))
		must(os.WriteFile(p, []byte(data), 0o640))
	}
	must(os.WriteFile(filepath.Join(outside, "secret.md"), []byte("top secret"), 0o640))
	write("notes/a.md", "alpha")
	write("notes/b.txt", "bravo")
	write("notes/sub/c.json", `{"c":1}`)
	write("notes-evil/x.md", "evil")
	write("a-b.md", "ab")
	write("a/x.md", "ax")
	write("upper.MD", "upper")
	write("image.png", "png")
	write("noext", "none")
	write(".md", "hidden")
	write("big.md", strings.Repeat("x", 100))
	must(os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "escape.md")))
	must(os.Symlink(outside, filepath.Join(root, "escapedir")))
	must(os.Symlink("notes/a.md", filepath.Join(root, "inside.md")))
	must(os.Symlink("notes", filepath.Join(root, "insidedir")))
	must(os.Symlink("../../../../etc/passwd", filepath.Join(root, "notes", "deep.md")))
	write(TempPrefix+"leftover", "partial")
	return root, outside
}

func openDocs(t *testing.T, cfg DocumentsConfig) *Documents {
	t.Helper()
	d, err := OpenDocuments(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// noPathIn fails when err's text carries the root or the caller's path.
func noPathIn(t *testing.T, err error, root, rel string) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if strings.Contains(msg, root) || (rel != "" && strings.Contains(msg, rel)) {
		t.Errorf("%q: error carries a path: %v", rel, err)
	}
}

// diskFiles returns every non-directory entry under root (slash paths),
// symlinks included, without following any.
func diskFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, e iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func hasTemp(files []string) bool {
	return slices.ContainsFunc(files, func(f string) bool { return strings.Contains(f, TempPrefix) })
}

func TestDocumentsReadAndStat(t *testing.T) {
	root, _ := corpus(t)
	d := openDocs(t, DocumentsConfig{Root: root, MaxReadBytes: 1000})
	ctx := t.Context()

	data, info, err := d.Read(ctx, "notes/a.md", 0)
	if err != nil || string(data) != "alpha" || info.Path != "notes/a.md" || info.Size != 5 {
		t.Fatalf("read: %q %+v %v", data, info, err)
	}
	if _, info, err := d.Read(ctx, "./notes//sub/c.json", 0); err != nil || info.Path != "notes/sub/c.json" {
		t.Fatalf("a non-canonical path reads as its clean form: %+v %v", info, err)
	}
	if st, err := d.Stat(ctx, "notes/b.txt"); err != nil || st.Size != 5 || st.Path != "notes/b.txt" {
		t.Fatalf("stat: %+v %v", st, err)
	}
	if _, _, err := d.Read(ctx, "big.md", 50); !errors.Is(err, ports.ErrTooLarge) {
		t.Errorf("maxBytes below the size: %v", err)
	}
	small := openDocs(t, DocumentsConfig{Root: root, MaxReadBytes: 50})
	if _, _, err := small.Read(ctx, "big.md", 1<<20); !errors.Is(err, ports.ErrTooLarge) {
		t.Errorf("the configured cap wins over a larger maxBytes: %v", err)
	}

	cases := []struct {
		rel  string
		want error
	}{
		{"missing.md", ports.ErrNotFound},
		{"notes/missing/a.md", ports.ErrNotFound},
		{"big.md/a.md", ports.ErrNotFound},
		{"image.png", ports.ErrNotDocument},
		{"noext", ports.ErrNotDocument},
		{".md", ports.ErrNotDocument},
		{"upper.MD", ports.ErrNotDocument},
		{TempPrefix + "leftover", ports.ErrNotFound},
		{TempPrefix + "dir/a.md", ports.ErrNotFound},
		{"", ports.ErrNotFound},
		{"notes/a.md\x00.txt", ports.ErrNotFound},
		{"../outside/secret.md", ports.ErrOutsideJail},
		{"notes/../../secret.md", ports.ErrOutsideJail},
		{"/etc/passwd.md", ports.ErrOutsideJail},
		{"escape.md", ports.ErrOutsideJail},
		{"escapedir/secret.md", ports.ErrOutsideJail},
		{"notes/deep.md", ports.ErrOutsideJail},
		// Symlinks that stay inside are refused too: documents are
		// exactly what List shows, and a link must not re-home a
		// document under another namespace.
		{"inside.md", ports.ErrOutsideJail},
		{"insidedir/a.md", ports.ErrOutsideJail},
	}
	for _, tc := range cases {
		_, _, err := d.Read(ctx, tc.rel, 0)
		if !errors.Is(err, tc.want) {
			t.Errorf("Read(%q): got %v, want %v", tc.rel, err, tc.want)
		}
		noPathIn(t, err, root, tc.rel)
		_, err = d.Stat(ctx, tc.rel)
		if !errors.Is(err, tc.want) {
			t.Errorf("Stat(%q): got %v, want %v", tc.rel, err, tc.want)
		}
		noPathIn(t, err, root, tc.rel)
	}

	if err := os.Mkdir(filepath.Join(root, "dir.md"), 0o750); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Read(ctx, "dir.md", 0); !errors.Is(err, ports.ErrNotRegular) {
		t.Errorf("a directory with a document extension: %v", err)
	}
}

func TestDocumentsReadInto(t *testing.T) {
	root, _ := corpus(t)
	d := openDocs(t, DocumentsConfig{Root: root})
	buf := make([]byte, 0, 4096)
	data, _, err := d.ReadInto(t.Context(), "notes/a.md", 0, buf)
	if err != nil || string(data) != "alpha" {
		t.Fatalf("%q %v", data, err)
	}
	if &data[0] != &buf[:1][0] {
		t.Error("a large enough buffer should be reused")
	}
	data, _, err = d.ReadInto(t.Context(), "big.md", 0, make([]byte, 0, 3))
	if err != nil || len(data) != 100 {
		t.Fatalf("a small buffer grows: %d %v", len(data), err)
	}
}

// TestReadSession: a session reads what Read reads and refuses what Read
// refuses, including after the directory it holds is swapped for a
// symlink, replaced, or moved out of the corpus.
func TestReadSession(t *testing.T) {
	root, outside := corpus(t)
	d := openDocs(t, DocumentsConfig{Root: root, MaxReadBytes: 1000})
	ctx := t.Context()
	s := d.OpenReadSession()
	defer s.Close()

	for _, rel := range []string{"notes/a.md", "notes/b.txt", "notes/sub/c.json", "notes/a.md", "a-b.md", "a/x.md",
		"missing.md", "notes/missing.md", "escape.md", "escapedir/secret.md", "insidedir/a.md", "notes/deep.md",
		"image.png", TempPrefix + "x", "../x.md", "big.md/a.md", "notes/a.md"} {
		want, wantInfo, wantErr := d.Read(ctx, rel, 0)
		got, gotInfo, gotErr := s.ReadInto(ctx, rel, 0, nil)
		if string(got) != string(want) || gotInfo != wantInfo || !errors.Is(gotErr, wantErr) {
			t.Errorf("%s: session %q %v %v, Read %q %v %v", rel, got, gotInfo, gotErr, want, wantInfo, wantErr)
		}
		if got, _, gotErr := s.Read(ctx, rel, 0); string(got) != string(want) || !errors.Is(gotErr, wantErr) {
			t.Errorf("%s: session Read %q %v", rel, got, gotErr)
		}
	}

	// Swap the held directory for a symlink to its renamed self.
	if _, _, err := s.ReadInto(ctx, "notes/a.md", 0, nil); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(root, "notes")
	if err := os.Rename(notes, filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("moved", notes); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ReadInto(ctx, "notes/b.txt", 0, nil); !errors.Is(err, ports.ErrOutsideJail) {
		t.Errorf("a held directory now behind a symlink: %v", err)
	}
	// Replace it with another real directory: the new one is read.
	if err := os.Remove(notes); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(notes, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "b.txt"), []byte("new bravo"), 0o640); err != nil {
		t.Fatal(err)
	}
	if data, _, err := s.ReadInto(ctx, "notes/b.txt", 0, nil); err != nil || string(data) != "new bravo" {
		t.Errorf("a replaced directory: %q %v", data, err)
	}
	// Move the held directory out of the corpus.
	if err := os.Rename(notes, filepath.Join(outside, "notes")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := s.ReadInto(ctx, "notes/b.txt", 0, nil); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("a held directory moved out of the corpus is still read: %q %v", data, err)
	}
}

func TestDocumentsList(t *testing.T) {
	root, _ := corpus(t)
	d := openDocs(t, DocumentsConfig{Root: root})
	ctx := t.Context()
	paths := func(docs []ports.FileInfo) []string {
		out := make([]string, len(docs))
		for i, f := range docs {
			out[i] = f.Path
		}
		return out
	}

	all, truncated, err := d.List(ctx, "", 100)
	if err != nil || truncated {
		t.Fatal(err, truncated)
	}
	want := []string{"a-b.md", "a/x.md", "big.md", "notes-evil/x.md", "notes/a.md", "notes/b.txt", "notes/sub/c.json"}
	if got := paths(all); !slices.Equal(got, want) {
		t.Fatalf("whole corpus:\n got %q\nwant %q", got, want)
	}
	if !slices.IsSorted(paths(all)) {
		t.Error("a listing must be in lexical order")
	}
	if all[0].Size != 2 || all[0].ModTime.IsZero() {
		t.Errorf("file info: %+v", all[0])
	}

	first, truncated, err := d.List(ctx, "", 3)
	if err != nil || !truncated || !slices.Equal(paths(first), want[:3]) {
		t.Errorf("limited: %q %v %v", paths(first), truncated, err)
	}
	exact, truncated, err := d.List(ctx, "", len(want))
	if err != nil || truncated || len(exact) != len(want) {
		t.Errorf("a limit equal to the count is not truncated: %d %v %v", len(exact), truncated, err)
	}

	prefixes := []struct {
		prefix string
		want   []string
	}{
		{"notes", []string{"notes/a.md", "notes/b.txt", "notes/sub/c.json"}},
		{"notes/", []string{"notes/a.md", "notes/b.txt", "notes/sub/c.json"}},
		{"./notes/sub/", []string{"notes/sub/c.json"}},
		{"notes/a.md", []string{"notes/a.md"}},
		{"notes/a.md/", nil},
		{"notes/a", nil},
		{"note", nil},
		{"missing/", nil},
		{"image.png", nil},
		{TempPrefix + "leftover", nil},
		{"a", []string{"a/x.md"}},
	}
	for _, tc := range prefixes {
		got, _, err := d.List(ctx, tc.prefix, 100)
		if err != nil || !slices.Equal(paths(got), tc.want) {
			t.Errorf("List(%q) = %q, %v; want %q", tc.prefix, paths(got), err, tc.want)
		}
	}
	for _, prefix := range []string{"../", "/etc", "escapedir", "escapedir/", "insidedir/", "notes/../../x"} {
		got, _, err := d.List(ctx, prefix, 100)
		if !errors.Is(err, ports.ErrOutsideJail) || len(got) != 0 {
			t.Errorf("List(%q) = %q, %v; want ErrOutsideJail", prefix, paths(got), err)
		}
		noPathIn(t, err, root, prefix)
	}
	if _, _, err := d.List(ctx, "", 0); err == nil {
		t.Error("a zero limit must be refused")
	}
}

func TestDocumentsWrite(t *testing.T) {
	root, outside := corpus(t)
	d := openDocs(t, DocumentsConfig{Root: root, MaxWriteBytes: 64})
	ctx := t.Context()
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatalf("reading %s from disk: %v", rel, err)
		}
		return string(b)
	}

	res, err := d.Write(ctx, "new/deeper/n.md", []byte("one"), ports.CreateOnly)
	if err != nil || res != (ports.WriteResult{Path: "new/deeper/n.md", Size: 3, Created: true}) {
		t.Fatalf("create with new directories: %+v %v", res, err)
	}
	if got := read("new/deeper/n.md"); got != "one" {
		t.Fatalf("content %q", got)
	}
	if st, err := os.Stat(filepath.Join(root, "new", "deeper")); err != nil || st.Mode().Perm()&0o027 != 0 {
		t.Errorf("created directories must not be group-writable or world-accessible: %v %v", st.Mode(), err)
	}

	// No clobber.
	_, err = d.Write(ctx, "new/deeper/n.md", []byte("two"), ports.CreateOnly)
	if !errors.Is(err, ports.ErrExists) || read("new/deeper/n.md") != "one" {
		t.Fatalf("CreateOnly over an existing document: %v, content %q", err, read("new/deeper/n.md"))
	}
	// Replace.
	res, err = d.Write(ctx, "new/deeper/n.md", []byte("three"), ports.Replace)
	if err != nil || res.Created || res.PreviousSize != 3 || res.Size != 5 || read("new/deeper/n.md") != "three" {
		t.Fatalf("replace: %+v %v", res, err)
	}
	// Replace creates when absent.
	res, err = d.Write(ctx, "fresh.txt", []byte("x"), ports.Replace)
	if err != nil || !res.Created || res.PreviousSize != 0 {
		t.Fatalf("replace of a missing document: %+v %v", res, err)
	}
	// What was written reads back through the store and lists.
	if data, _, err := d.Read(ctx, "new/deeper/n.md", 0); err != nil || string(data) != "three" {
		t.Fatalf("read back: %q %v", data, err)
	}
	if docs, _, _ := d.List(ctx, "new", 10); len(docs) != 1 || docs[0].Path != "new/deeper/n.md" {
		t.Fatalf("listed: %+v", docs)
	}

	before := diskFiles(t, root)
	outsideBefore := diskFiles(t, outside)
	refusals := []struct {
		rel  string
		mode ports.WriteMode
		data string
		want error
	}{
		{"image.png", ports.Replace, "x", ports.ErrNotDocument},
		{"upper.MD", ports.Replace, "x", ports.ErrNotDocument},
		{"noext", ports.CreateOnly, "x", ports.ErrNotDocument},
		{".md", ports.CreateOnly, "x", ports.ErrNotDocument},
		{TempPrefix + "abc", ports.Replace, "x", ports.ErrNotDocument},
		{TempPrefix + "dir/a.md", ports.CreateOnly, "x", ports.ErrNotDocument},
		{"notes/" + TempPrefix + "x.md", ports.CreateOnly, "x", ports.ErrNotDocument},
		{"", ports.CreateOnly, "x", ports.ErrNotDocument},
		{"../escape.md", ports.CreateOnly, "x", ports.ErrOutsideJail},
		{"/tmp/abs.md", ports.CreateOnly, "x", ports.ErrOutsideJail},
		{"escapedir/planted.md", ports.CreateOnly, "x", ports.ErrOutsideJail},
		{"escapedir/secret.md", ports.Replace, "x", ports.ErrOutsideJail},
		{"escapedir/new/planted.md", ports.Replace, "x", ports.ErrOutsideJail},
		{"insidedir/a.md", ports.Replace, "x", ports.ErrOutsideJail},
		{"escape.md", ports.Replace, "x", ports.ErrOutsideJail},
		{"inside.md", ports.Replace, "x", ports.ErrOutsideJail},
		{"escape.md", ports.CreateOnly, "x", ports.ErrOutsideJail},
		{"notes", ports.Replace, "x", ports.ErrNotDocument},
		{"big.md/child.md", ports.CreateOnly, "x", ports.ErrNotFound},
		{"notes/a.md", ports.CreateOnly, "x", ports.ErrExists},
		{"huge.md", ports.CreateOnly, strings.Repeat("x", 65), ports.ErrTooLarge},
	}
	for _, tc := range refusals {
		_, err := d.Write(ctx, tc.rel, []byte(tc.data), tc.mode)
		if !errors.Is(err, tc.want) {
			t.Errorf("Write(%q): got %v, want %v", tc.rel, err, tc.want)
		}
		noPathIn(t, err, root, tc.rel)
	}
	if err := os.Mkdir(filepath.Join(root, "dir.md"), 0o750); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(ctx, "dir.md", []byte("x"), ports.Replace); !errors.Is(err, ports.ErrNotRegular) {
		t.Errorf("replacing a directory: %v", err)
	}
	if _, err := d.Write(ctx, "dir.md", []byte("x"), ports.CreateOnly); !errors.Is(err, ports.ErrNotRegular) {
		t.Errorf("creating over a directory: %v", err)
	}
	if err := os.Remove(filepath.Join(root, "dir.md")); err != nil {
		t.Fatal(err)
	}
	if after := diskFiles(t, root); !slices.Equal(after, before) {
		t.Errorf("refused writes changed the corpus:\nbefore %q\n after %q", before, after)
	}
	if after := diskFiles(t, outside); !slices.Equal(after, outsideBefore) {
		t.Errorf("a write landed outside the root: %q", after)
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "secret.md")); string(got) != "top secret" {
		t.Errorf("the file behind a symlink was changed: %q", got)
	}
	if got := read("notes/a.md"); got != "alpha" {
		t.Errorf("the target of an inside symlink was changed: %q", got)
	}
	if l, err := os.Readlink(filepath.Join(root, "inside.md")); err != nil || l != "notes/a.md" {
		t.Errorf("a symlink was replaced: %q %v", l, err)
	}
	if hasTemp(diskFiles(t, root)) {
		t.Errorf("a temporary file was left behind: %q", diskFiles(t, root))
	}
	if _, err := d.Write(ctx, "a.md", nil, ports.WriteMode(7)); err == nil {
		t.Error("an unknown write mode must be refused")
	}
}

func TestDocumentsQuota(t *testing.T) {
	root := filepath.Join(t.TempDir(), "docs")
	if err := os.MkdirAll(filepath.Join(root, "pre"), 0o750); err != nil {
		t.Fatal(err)
	}
	// Usage at open counts documents only: not other files, not symlinks,
	// not leftover temporary files (which are removed).
	for name, size := range map[string]int{"pre/a.md": 20, "pre/skip.png": 500, TempPrefix + "x": 500} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), make([]byte, size), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("pre/a.md", filepath.Join(root, "link.md")); err != nil {
		t.Fatal(err)
	}
	d := openDocs(t, DocumentsConfig{Root: root, QuotaBytes: 100, MaxWriteBytes: 1000})
	ctx := t.Context()
	if d.Usage() != 20 {
		t.Fatalf("usage at open: %d, want 20", d.Usage())
	}

	steps := []struct {
		rel   string
		size  int
		mode  ports.WriteMode
		want  error
		usage int64
	}{
		{"b.md", 50, ports.CreateOnly, nil, 70},
		{"c.md", 31, ports.CreateOnly, ports.ErrQuota, 70}, // 101 > 100
		{"c.md", 30, ports.CreateOnly, nil, 100},           // exactly the quota
		{"d.md", 1, ports.CreateOnly, ports.ErrQuota, 100},
		{"b.md", 51, ports.Replace, ports.ErrQuota, 100}, // grows by one
		{"b.md", 10, ports.Replace, nil, 60},             // shrinking always passes
		{"b.md", 50, ports.Replace, nil, 100},            // grows back to the quota
		{"pre/a.md", 0, ports.Replace, nil, 80},
		{"e.md", 2000, ports.CreateOnly, ports.ErrTooLarge, 80},
		{"b.md", 40, ports.CreateOnly, ports.ErrExists, 80},
	}
	for i, s := range steps {
		_, err := d.Write(ctx, s.rel, make([]byte, s.size), s.mode)
		if !errors.Is(err, s.want) {
			t.Fatalf("step %d (%s %d): got %v, want %v", i, s.rel, s.size, err, s.want)
		}
		if d.Usage() != s.usage {
			t.Fatalf("step %d: usage %d, want %d", i, d.Usage(), s.usage)
		}
		if got := diskUsage(t, root); got != s.usage {
			t.Fatalf("step %d: disk holds %d document bytes, accounting says %d", i, got, s.usage)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "d.md")); !errors.Is(err, iofs.ErrNotExist) {
		t.Error("a write refused by the quota left a file")
	}

	// Out-of-band edits are reconciled by Rescan.
	if err := os.WriteFile(filepath.Join(root, "oob.md"), make([]byte, 15), 0o640); err != nil {
		t.Fatal(err)
	}
	if d.Usage() != 80 {
		t.Fatalf("usage moved without a write: %d", d.Usage())
	}
	if err := d.Rescan(ctx); err != nil || d.Usage() != 95 {
		t.Fatalf("rescan: %d %v", d.Usage(), err)
	}
}

// diskUsage sums the sizes of the documents (allowed extensions, regular,
// outside temp names) actually on disk.
func diskUsage(t *testing.T, root string) int64 {
	t.Helper()
	var sum int64
	for _, f := range diskFiles(t, root) {
		if strings.Contains(f, TempPrefix) || !slices.Contains(defaultExtensions, filepath.Ext(f)) {
			continue
		}
		st, err := os.Lstat(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().IsRegular() {
			sum += st.Size()
		}
	}
	return sum
}

// TestWriteCancelledMidway cancels a write after its temporary file is
// durable: nothing is put in place, the temporary file is removed, and the
// quota reservation is returned.
func TestWriteCancelledMidway(t *testing.T) {
	root := t.TempDir()
	d := openDocs(t, DocumentsConfig{Root: root, QuotaBytes: 100})
	t.Cleanup(func() { testHookBeforeCommit = nil })
	for _, mode := range []ports.WriteMode{ports.CreateOnly, ports.Replace} {
		ctx, cancel := context.WithCancel(t.Context())
		hooked := false
		testHookBeforeCommit = func() { hooked = true; cancel() }
		if _, err := d.Write(ctx, "a/b.md", make([]byte, 60), mode); !errors.Is(err, context.Canceled) || !hooked {
			t.Fatalf("mode %d: %v (hook ran: %v)", mode, err, hooked)
		}
	}
	if files := diskFiles(t, root); len(files) != 0 || d.Usage() != 0 {
		t.Fatalf("a cancelled write left %q, usage %d", files, d.Usage())
	}
	testHookBeforeCommit = nil
	if _, err := d.Write(t.Context(), "a/b.md", make([]byte, 100), ports.CreateOnly); err != nil {
		t.Fatalf("the released reservation must be usable: %v", err)
	}
}

func TestOpenDocumentsCleansLeftovers(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{TempPrefix + "a", "sub/" + TempPrefix + "b", "sub/deeper/" + TempPrefix + "c.md"} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("partial"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(root, TempPrefix+"link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "sub", "keep.md"), []byte("keep"), 0o640); err != nil {
		t.Fatal(err)
	}
	d := openDocs(t, DocumentsConfig{Root: root})
	if got := diskFiles(t, root); !slices.Equal(got, []string{"sub/keep.md"}) {
		t.Fatalf("after open: %q", got)
	}
	if d.Usage() != 4 {
		t.Errorf("usage %d", d.Usage())
	}
}

func TestOpenDocumentsConfig(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "a", "b")
	d, err := OpenDocuments(DocumentsConfig{Root: root, Extensions: []string{".MD", " .txt "}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		t.Fatalf("the root was not created: %v", err)
	}
	if d.Dir() != root || d.Quota() != DefaultQuotaBytes {
		t.Errorf("dir %q quota %d", d.Dir(), d.Quota())
	}
	ctx := t.Context()
	for rel, want := range map[string]error{"a.md": nil, "b.txt": nil, "c.json": ports.ErrNotDocument} {
		if _, err := d.Write(ctx, rel, []byte("x"), ports.CreateOnly); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", rel, err, want)
		}
	}
	for _, bad := range [][]string{{"md"}, {"."}, {".tar.gz"}, {"./md"}, {".m\x00d"}} {
		if _, err := OpenDocuments(DocumentsConfig{Root: base, Extensions: bad}); err == nil {
			t.Errorf("extensions %q accepted", bad)
		}
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	_, err = OpenDocuments(DocumentsConfig{Root: file})
	if err == nil {
		t.Fatal("a root that is a file must be refused")
	}
	noPathIn(t, err, file, "")
}

// TestConcurrentCreateSamePath races 64 writers, spread over four stores
// opened on the same directory (so the per-path lock of one store cannot be
// what decides), to create one document: the hard link lets exactly one
// win, and its content is intact.
func TestConcurrentCreateSamePath(t *testing.T) {
	root := t.TempDir()
	stores := make([]*Documents, 4)
	for i := range stores {
		stores[i] = openDocs(t, DocumentsConfig{Root: root})
	}
	const writers = 64
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		mu      sync.Mutex
		winners []int
		others  []error
	)
	for i := range writers {
		wg.Go(func() {
			<-start
			_, err := stores[i%len(stores)].Write(t.Context(), "race/doc.json", payload(i), ports.CreateOnly)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				winners = append(winners, i)
			} else if !errors.Is(err, ports.ErrExists) {
				others = append(others, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(winners) != 1 || len(others) != 0 {
		t.Fatalf("winners %v, unexpected errors %v", winners, others)
	}
	got, err := os.ReadFile(filepath.Join(root, "race", "doc.json"))
	if err != nil || !bytes.Equal(got, payload(winners[0])) {
		t.Fatalf("content is not the winner's: %q %v", got, err)
	}
	if hasTemp(diskFiles(t, root)) {
		t.Errorf("temporary files left: %q", diskFiles(t, root))
	}
}

func payload(i int) []byte {
	return fmt.Appendf(nil, `{"writer":%d,"pad":"%s"}`, i, strings.Repeat("p", 100+i*37))
}

// TestConcurrentQuota hammers one store with writers creating distinct
// documents and replacing shared ones with random sizes around a small
// quota: the accounted usage never exceeds the quota, and at the end it
// equals what is on disk.
func TestConcurrentQuota(t *testing.T) {
	root := t.TempDir()
	const quota = 5000
	d := openDocs(t, DocumentsConfig{Root: root, QuotaBytes: quota})
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		mu    sync.Mutex
		fails []string
		ok    int
		full  int
	)
	report := func(format string, args ...any) {
		mu.Lock()
		fails = append(fails, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for g := range 64 {
		wg.Go(func() {
			<-start
			for i := range 40 {
				rel := fmt.Sprintf("g%02d/%03d.txt", g, i)
				mode := ports.CreateOnly
				if i%3 == 0 {
					rel = fmt.Sprintf("shared/%d.txt", i%5)
					mode = ports.Replace
				}
				size := (g*131 + i*71) % 400
				_, err := d.Write(t.Context(), rel, bytes.Repeat([]byte{'q'}, size), mode)
				switch {
				case err == nil:
					mu.Lock()
					ok++
					mu.Unlock()
				case errors.Is(err, ports.ErrQuota):
					mu.Lock()
					full++
					mu.Unlock()
				default:
					report("%s: %v", rel, err)
				}
				if u := d.Usage(); u > quota || u < 0 {
					report("usage %d outside [0, %d]", u, quota)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if len(fails) > 0 {
		t.Fatalf("%d failures, first: %s", len(fails), fails[0])
	}
	if ok == 0 || full == 0 {
		t.Fatalf("%d writes succeeded and %d met the quota: the test must see both", ok, full)
	}
	if d.Usage() > quota {
		t.Fatalf("usage %d exceeds the quota", d.Usage())
	}
	if disk := diskUsage(t, root); disk != d.Usage() {
		t.Fatalf("disk holds %d bytes, accounting says %d", disk, d.Usage())
	}
	if hasTemp(diskFiles(t, root)) {
		t.Errorf("temporary files left")
	}
}
