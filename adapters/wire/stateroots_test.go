package wire_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
)

// TestStateInsideAServedRootStopsTheStart: a directory holding the
// server's own state inside (or equal to) a directory a file tool serves
// is a start-up error naming both variables, raised before the state
// directory is created; side by side, as the defaults lay them out, they
// start.
func TestStateInsideAServedRootStopsTheStart(t *testing.T) {
	base := t.TempDir()
	at := func(p string) string { return filepath.Join(base, p) }
	for _, d := range []string{"sandbox", "project"} {
		if err := os.Mkdir(at(d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// "link" is another spelling of the project directory.
	if err := os.Symlink(at("project"), at("link")); err != nil {
		t.Fatal(err)
	}
	sides := map[string]string{"ARROWHEAD_PROFILE": "full", "ARROWHEAD_JAIL_ROOT": at("sandbox"),
		"ARROWHEAD_DOCS_ROOT": at("documents"), "ARROWHEAD_REPO_ROOT": at("project"), "ARROWHEAD_DATA_DIR": at("data")}
	for _, c := range []struct {
		name   string
		env    map[string]string
		inner  string // the state variable named, "" for a start
		served string
	}{
		{"side by side", nil, "", ""},
		{"data in the jail", map[string]string{"ARROWHEAD_DATA_DIR": at("sandbox/data")}, "ARROWHEAD_DATA_DIR", "ARROWHEAD_JAIL_ROOT"},
		{"data is the corpus", map[string]string{"ARROWHEAD_DOCS_ROOT": at("corpus"), "ARROWHEAD_DATA_DIR": at("corpus")}, "ARROWHEAD_DATA_DIR", "ARROWHEAD_DOCS_ROOT"},
		{"data deep in the repository, through a symlink", map[string]string{"ARROWHEAD_DATA_DIR": at("link/not/yet/made")}, "ARROWHEAD_DATA_DIR", "ARROWHEAD_REPO_ROOT"},
		{"scratch in the repository, exec off", map[string]string{"ARROWHEAD_EXEC_WORKDIR": at("project/exec-scratch")}, "", ""},
		{"scratch in the repository, exec on", map[string]string{"ARROWHEAD_EXEC_WORKDIR": at("project/exec-scratch"), "ARROWHEAD_EXEC_ENABLED": "true"},
			"ARROWHEAD_EXEC_WORKDIR", "ARROWHEAD_REPO_ROOT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range sides {
				env[k] = v
			}
			for k, v := range c.env {
				env[k] = v
			}
			rt, err := wire.Build(t.Context(), coretest.Settings(t, env), wire.Options{AuditWriter: io.Discard})
			if c.inner == "" {
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				_ = rt.Close(t.Context())
				return
			}
			if err == nil {
				_ = rt.Close(t.Context())
				t.Fatal("Build started")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, c.inner+" lies inside "+c.served) || !strings.Contains(msg, "set "+c.inner+" to a directory outside it") {
				t.Fatalf("Build error = %q", msg)
			}
			if _, err := os.Stat(env[c.inner]); !os.IsNotExist(err) {
				t.Fatalf("%s was created before the refusal: %v", c.inner, err)
			}
		})
	}
}
