package wire

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/exectools"
)

// goCacheDir is where each caller's Go build cache lives under
// ARROWHEAD_DATA_DIR.
const goCacheDir = "exec-cache/go"

// workdirGoCache is where they live under ARROWHEAD_EXEC_WORKDIR when the
// data directory is out of the sandbox identity's reach.
const workdirGoCache = "cache/go"

// pytestProbeTimeout bounds the start-up check for pytest.
const pytestProbeTimeout = 10 * time.Second

// sandboxIDs are the uid and gid sandboxed commands run as: nobody when the
// server is root, the server's own ids otherwise (see adapters/sandbox).
func sandboxIDs() (uid, gid int) {
	if os.Geteuid() == 0 {
		return sandbox.NobodyID, sandbox.NobodyID
	}
	return os.Getuid(), os.Getgid()
}

// findToolchain finds run_tests' toolchains on the server's own PATH, each
// as an absolute path the sandbox identity can execute, and resolves the
// configured test command's program the same way (falling back to the
// sandbox PATH). A configured program that cannot be found refuses the
// start; a missing toolchain only disables its detection. warnings say
// what will run slower or not at all.
func findToolchain(ctx context.Context, s *settings.Settings, argv []string) (exectools.Toolchain, []string, error) {
	var tc exectools.Toolchain
	var warnings []string
	uid, gid := sandboxIDs()
	if len(argv) > 0 {
		program, ok := findProgram(argv[0], uid, gid)
		if !ok {
			return tc, nil, fmt.Errorf("ARROWHEAD_EXEC_TEST_COMMAND: its program %q is not on the server's PATH or the sandbox PATH (%s), or uid %d cannot run it",
				argv[0], sandbox.SandboxPATH, uid)
		}
		tc.Command = append([]string{program}, argv[1:]...)
	}
	tc.Go, _ = findProgram("go", uid, gid)
	tc.Python, _ = findProgram("python3", uid, gid)
	tc.NPM, _ = findProgram("npm", uid, gid)
	if tc.Go != "" {
		if mc := goModCache(); mc != "" && modCacheServable(mc, uid, gid) {
			tc.GoModCache = mc
		} else if mc != "" {
			warnings = append(warnings, fmt.Sprintf("run_tests: uid %d cannot read the Go module cache (its directory and cache/download must be readable and searchable by that uid: the go command makes them so); Go modules with dependencies will not test offline", uid))
		}
		if root, ok := goCacheRoot(s, uid, gid); ok {
			tc.GoCache = func(_ context.Context, owner string) (string, error) { return ownCacheDir(root, owner, uid, gid) }
		} else {
			warnings = append(warnings, fmt.Sprintf("run_tests: uid %d can reach neither ARROWHEAD_DATA_DIR nor ARROWHEAD_EXEC_WORKDIR, so Go builds start from a cold cache every run", uid))
		}
	}
	if tc.Python != "" && len(argv) == 0 {
		tc.Pytest = hasPytest(ctx, tc.Python)
	}
	return tc, warnings, nil
}

// goCacheRoot is the directory the callers' Go build caches live in:
// ARROWHEAD_DATA_DIR/exec-cache/go when the sandbox identity can reach it,
// else beside the scratch directories under ARROWHEAD_EXEC_WORKDIR (which
// the runner has made reachable): a root server's data directory is
// private to root, and is not opened up for this.
func goCacheRoot(s *settings.Settings, uid, gid int) (string, bool) {
	for _, root := range []string{filepath.Join(s.DataDir, goCacheDir), filepath.Join(s.ExecWorkdir, workdirGoCache)} {
		abs, err := filepath.Abs(root)
		if err != nil {
			continue
		}
		parent := filepath.Dir(filepath.Dir(abs))
		if _, err := os.Stat(parent); err != nil || !reachable(parent, uid, gid, 0o1) {
			continue
		}
		if err := os.MkdirAll(abs, 0o711); err != nil {
			continue
		}
		if reachable(abs, uid, gid, 0o1) {
			return abs, true
		}
	}
	return "", false
}

// findProgram looks name up on the server's PATH, then on the sandbox
// PATH, keeping the first regular executable file the sandbox identity can
// reach and run (a pyenv shim under a private home is passed over). An
// absolute name must be such a file; a relative one with a slash is left
// alone, as it names a file of the copy the command runs in.
func findProgram(name string, uid, gid int) (string, bool) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			return name, true
		}
		return name, reachable(name, uid, gid, 0o1)
	}
	dirs := append(filepath.SplitList(os.Getenv("PATH")), filepath.SplitList(sandbox.SandboxPATH)...)
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue // a relative PATH entry would mean something else in the sandbox
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			continue
		}
		if reachable(p, uid, gid, 0o1) {
			return p, true
		}
	}
	return "", false
}

// reachable reports whether uid/gid (without supplementary groups) may
// traverse every directory up to path, following symlinks, and has the
// permission bits want (0o4 read, 0o1 execute/search) on path itself.
func reachable(path string, uid, gid int, want fs.FileMode) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	if uid == 0 {
		return true
	}
	allowed := func(p string, bits fs.FileMode) bool {
		st, err := os.Stat(p)
		return err == nil && permits(st, uid, gid, bits)
	}
	if !allowed(real, want) {
		return false
	}
	for d := filepath.Dir(real); ; d = filepath.Dir(d) {
		if !allowed(d, 0o1) {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

// modCacheServable reports whether the runner can show the module cache to
// uid/gid. A root server's runner shows the tree itself at a fixed sandbox
// path, through a descriptor it opens (ports.Mount.At), so its parents
// (/root, 0700) need not and do not open up: the tree's own top
// directories must be readable and searchable by the sandbox uid, as the
// go command leaves them (extracted modules are 0555 and 0444 below).
// Otherwise the server's own uid, which the commands run as, must reach
// it.
func modCacheServable(mc string, uid, gid int) bool {
	if os.Geteuid() != 0 {
		return reachable(mc, uid, gid, 0o5)
	}
	for _, d := range []string{mc, filepath.Join(mc, "cache"), filepath.Join(mc, "cache", "download")} {
		st, err := os.Stat(d)
		if errors.Is(err, fs.ErrNotExist) && d != mc {
			continue
		}
		if err != nil || !st.IsDir() || !permits(st, uid, gid, 0o5) {
			return false
		}
	}
	return true
}

// goModCache is the Go module cache as the go command finds it: GOMODCACHE,
// else the first GOPATH entry's pkg/mod, else ~/go/pkg/mod.
func goModCache() string {
	if mc := os.Getenv("GOMODCACHE"); mc != "" {
		return filepath.Clean(mc)
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		gopath = filepath.Join(home, "go")
	}
	first := filepath.SplitList(gopath)[0]
	if !filepath.IsAbs(first) {
		return ""
	}
	return filepath.Join(first, "pkg", "mod")
}

// ownCacheDir creates (once) and returns owner's build cache under root,
// owned by the sandbox identity and private to it.
func ownCacheDir(root, owner string, uid, gid int) (string, error) {
	if owner == "" || strings.ContainsAny(owner, `/\.`) {
		return "", errors.New("the cache owner is malformed")
	}
	dir := filepath.Join(root, owner)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", errors.New("creating the build cache failed")
	}
	if os.Geteuid() == 0 {
		if err := os.Lchown(dir, uid, gid); err != nil {
			return "", errors.New("handing the build cache to the sandbox user failed")
		}
	}
	return dir, nil
}

// hasPytest reports whether python imports pytest in isolated mode (no
// user site, no PYTHON* variables), as the sandbox would find it.
func hasPytest(ctx context.Context, python string) bool {
	ctx, cancel := context.WithTimeout(ctx, pytestProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-I", "-c",
		"import importlib.util, sys; sys.exit(importlib.util.find_spec('pytest') is None)")
	cmd.Env = []string{"PATH=" + sandbox.SandboxPATH, "LANG=C.UTF-8"}
	return cmd.Run() == nil
}

// permits reports whether st's permission bits give uid/gid (without
// supplementary groups) the bits want (0o4 read, 0o1 execute/search).
func permits(st fs.FileInfo, uid, gid int, bits fs.FileMode) bool {
	perm := st.Mode().Perm()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		switch {
		case int(sys.Uid) == uid:
			return perm&(bits<<6) == bits<<6
		case int(sys.Gid) == gid:
			return perm&(bits<<3) == bits<<3
		}
	}
	return perm&bits == bits
}
