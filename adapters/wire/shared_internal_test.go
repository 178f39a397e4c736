package wire

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/signing"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/internal/pgtest"
)

// storeEnv is a configuration with every directory under a fresh temp dir;
// the data directory is returned too.
func storeEnv(t *testing.T, extra map[string]string) (map[string]string, string) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"ARROWHEAD_JAIL_ROOT": filepath.Join(dir, "sandbox"), "ARROWHEAD_DOCS_ROOT": filepath.Join(dir, "documents"),
		"ARROWHEAD_DATA_DIR": filepath.Join(dir, "data")}
	if err := os.Mkdir(env["ARROWHEAD_JAIL_ROOT"], 0o700); err != nil {
		t.Fatal(err)
	}
	for k, v := range extra {
		env[k] = v
	}
	return env, env["ARROWHEAD_DATA_DIR"]
}

// usesSharedStore states the openers' conditions a second time, so it is
// held to them: the store is opened early exactly when a family goes on to
// use it, and never created for nothing.
func TestUsesSharedStoreMatchesTheAssembly(t *testing.T) {
	dsn := pgtest.PostgresDSN(t)
	for _, c := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"defaults: the embedded vector index", nil, true},
		{"vectors on PostgreSQL, core profile", map[string]string{"ARROWHEAD_PROFILE": "core", "ARROWHEAD_SQL_DSN": dsn}, false},
		{"vectors on PostgreSQL, docs profile: memories and tasks", map[string]string{"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_SQL_DSN": dsn}, true},
		{"vectors on PostgreSQL, coding profile: working sets", map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_SQL_DSN": dsn}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, data := storeEnv(t, c.env)
			s := coretest.Settings(t, env)
			if got := usesSharedStore(s); got != c.want {
				t.Fatalf("usesSharedStore = %v, want %v", got, c.want)
			}
			rt, err := Build(t.Context(), s, Options{AuditWriter: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = rt.Close(context.Background()) }()
			if opened := rt.shared != nil; opened != c.want {
				t.Fatalf("the assembly opened the shared store: %v, usesSharedStore says %v", opened, c.want)
			}
			if _, err := os.Stat(filepath.Join(data, sqlite.FileName)); (err == nil) != c.want {
				t.Fatalf("store file exists: %v, want %v", err == nil, c.want)
			}
		})
	}
}

// A store that cannot be opened still fails the start, with the error it
// always gave, although it is opened in the background.
func TestEarlyOpenFailureFailsTheStart(t *testing.T) {
	// The attestation key lives elsewhere, so the store is what fails.
	keyDir := t.TempDir()
	if _, err := signing.Load("", keyDir); err != nil {
		t.Fatal(err)
	}
	env, data := storeEnv(t, map[string]string{"ARROWHEAD_ATTESTATION_KEY": filepath.Join(keyDir, signing.FileName)})
	if err := os.WriteFile(data, []byte("a file, not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := Build(t.Context(), coretest.Settings(t, env), Options{AuditWriter: io.Discard})
	if err == nil {
		_ = rt.Close(context.Background())
		t.Fatal("Build succeeded with ARROWHEAD_DATA_DIR naming a file")
	}
	if !strings.HasPrefix(err.Error(), "ARROWHEAD_DATA_DIR: the embedded store cannot be opened") {
		t.Fatalf("Build error = %q", err)
	}
}

// A start that fails before any family took the store closes the store
// opened for it: no descriptor of its file stays open.
func TestFailedStartClosesTheEarlyStore(t *testing.T) {
	env, data := storeEnv(t, map[string]string{"ARROWHEAD_JAIL_ROOT": filepath.Join(t.TempDir(), "missing")})
	_, err := Build(t.Context(), coretest.Settings(t, env), Options{AuditWriter: io.Discard})
	if err == nil || !strings.HasPrefix(err.Error(), "ARROWHEAD_JAIL_ROOT") {
		t.Fatalf("Build error = %v, want the sandbox's", err)
	}
	if _, err := os.Stat(filepath.Join(data, sqlite.FileName)); err != nil {
		t.Fatalf("the store was not opened early: %v", err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to count descriptors")
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if strings.HasPrefix(target, filepath.Join(data, sqlite.FileName)) {
			t.Fatalf("descriptor %s still open on %s after the failed start", fd.Name(), target)
		}
	}
}
