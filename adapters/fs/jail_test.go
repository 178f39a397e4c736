package fs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

func TestJailReadFile(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("top secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "notes"), 0o755))
	must(os.WriteFile(filepath.Join(root, "notes", "a.txt"), []byte("hello"), 0o644))
	must(os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("x", 100)), 0o644))
	must(os.Symlink(secret, filepath.Join(root, "escape.txt")))
	must(os.Symlink(outside, filepath.Join(root, "escapedir")))
	must(os.Symlink("notes/a.txt", filepath.Join(root, "inside-link.txt")))
	must(os.Symlink("../../../../../../etc/passwd", filepath.Join(root, "notes", "deep.txt")))

	j, err := OpenJail(root)
	must(err)
	defer j.Close()

	data, info, err := j.ReadFile(t.Context(), "notes/a.txt", 1000)
	if err != nil || string(data) != "hello" || info.Size != 5 {
		t.Fatalf("read: %q %v %v", data, info, err)
	}
	if data, _, err := j.ReadFile(t.Context(), "inside-link.txt", 1000); err != nil || string(data) != "hello" {
		t.Fatalf("a symlink that stays inside must work: %q %v", data, err)
	}
	cases := map[string]error{
		"missing.txt":          ports.ErrNotFound,
		"big.txt":              ports.ErrTooLarge,
		"escape.txt":           ports.ErrOutsideJail,
		"escapedir/secret.txt": ports.ErrOutsideJail,
		"notes/deep.txt":       ports.ErrOutsideJail,
		"notes":                ports.ErrNotRegular,
	}
	for rel, want := range cases {
		_, _, err := j.ReadFile(t.Context(), rel, 50)
		if !errors.Is(err, want) {
			t.Errorf("%s: got %v, want %v", rel, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), root) || strings.Contains(err.Error(), rel)) {
			t.Errorf("%s: error carries a path: %v", rel, err)
		}
	}
}
