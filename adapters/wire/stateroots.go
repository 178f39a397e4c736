package wire

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/exectools"
)

// CheckStateNotServed refuses to start when a directory holding the
// server's own state lies inside (or is) a directory the file tools serve
// (Build calls it first; check-config too, as it has no side effect).
// read_file serves any file under its root raw, so a data directory inside
// the jail would hand every caller the embedded store (every principal's
// memories and kv values) and the attestation signing key; inside the
// corpus or the repository only the extension allowlists would stand in
// the way, and inside the repository the scratch root would show one
// caller's test runs to another's searches. Nesting is the only way in:
// a symlink from a served root to anywhere outside it is refused by every
// store. The check runs before anything is created, on paths resolved
// through the symlinks that already exist.
func CheckStateNotServed(s *settings.Settings) error {
	served := []struct{ name, dir, tools string }{
		{"ARROWHEAD_JAIL_ROOT", s.JailRoot, "read_file"},
		{"ARROWHEAD_DOCS_ROOT", s.DocsRoot, "the document tools"},
		{"ARROWHEAD_REPO_ROOT", s.RepoRoot, "the repository tools"},
	}
	state := []struct{ name, dir, holds string }{
		{"ARROWHEAD_DATA_DIR", s.DataDir, "the embedded store and the attestation signing key"},
	}
	if exectools.Family.Serves(s) {
		state = append(state, struct{ name, dir, holds string }{"ARROWHEAD_EXEC_WORKDIR", s.ExecWorkdir, "every caller's test runs"})
	}
	for _, st := range state {
		inner, err := resolvedPath(st.dir)
		if err != nil {
			return fmt.Errorf("%s: the directory cannot be resolved", st.name)
		}
		for _, sv := range served {
			outer, err := resolvedPath(sv.dir)
			if err != nil {
				return fmt.Errorf("%s: the directory cannot be resolved", sv.name)
			}
			if within(inner, outer) {
				return fmt.Errorf("%s lies inside %s, so %s would serve %s: set %s to a directory outside it",
					st.name, sv.name, sv.tools, st.holds, st.name)
			}
		}
	}
	return nil
}

// resolvedPath is dir made absolute with the symlinks of its longest
// existing ancestor resolved, so two spellings of one place compare equal
// whether or not the directory exists yet.
func resolvedPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	var rest []string
	for p := abs; ; p = filepath.Dir(p) {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, os.ErrNotExist) || filepath.Dir(p) == p {
			return "", err
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
}

// within reports whether dir is outer or lies beneath it.
func within(dir, outer string) bool {
	rel, err := filepath.Rel(outer, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
