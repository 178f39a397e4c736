package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/ports"
)

// A file that is not a SQLite database, or one whose pages are damaged,
// is refused at open with ErrCorrupt, whose message names the variable
// and never the path.
func TestDamagedStoreIsRefusedAtOpen(t *testing.T) {
	t.Run("foreign file", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, sqlite.FileName), []byte("this is not a database, but it is long enough to read"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := sqlite.Open(sqlite.Config{Dir: dir})
		if !errors.Is(err, sqlite.ErrCorrupt) || strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "ARROWHEAD_DATA_DIR") {
			t.Fatalf("Open = %v, want ErrCorrupt naming the variable", err)
		}
	})
	t.Run("damaged pages", func(t *testing.T) {
		dir := t.TempDir()
		s, err := sqlite.Open(sqlite.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		mem := sqlite.NewMemoryStore(s)
		for i := range 40 {
			if err := mem.KVSet(context.Background(), "alice", ports.KVEntry{Key: strings.Repeat("k", i+1),
				Value: strings.Repeat("v", 3000), UpdatedAt: time.Now()}, ports.MemoryLimits{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil { // checkpoints the log into the file
			t.Fatal(err)
		}
		path := filepath.Join(dir, sqlite.FileName)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) < 8*4096 {
			t.Fatalf("the file is only %d bytes", len(raw))
		}
		// Overwrite pages 3 to 6 (b-tree pages of the tables) with junk.
		for i := 2 * 4096; i < 6*4096; i++ {
			raw[i] = byte(i * 7)
		}
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = sqlite.Open(sqlite.Config{Dir: dir})
		if !errors.Is(err, sqlite.ErrCorrupt) || strings.Contains(err.Error(), dir) {
			t.Fatalf("Open = %v, want ErrCorrupt", err)
		}
	})
}

// A new file is created with mode 0600 in a directory created 0700.
func TestStoreFileIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	openStore(t, dir)
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, sqlite.FileName): 0o600} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want %v", filepath.Base(path), fi.Mode().Perm(), err, want)
		}
	}
}
