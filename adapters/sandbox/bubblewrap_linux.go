package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/arrowhead-go/arrowhead/ports"
)

// bwrapPath is Debian's bubblewrap. A variable only so tests can point it
// at nothing.
var bwrapPath = "/usr/bin/bwrap"

// Where the scratch directory appears inside the bubblewrap sandbox.
const sandboxScratch = "/scratch"

// tmpfsBytes caps the private /tmp of the bubblewrap and container
// sandboxes.
const tmpfsBytes = 64 << 20

// systemDirs are shown read-only in the sandbox: the installed software
// and nothing else of the host. On a merged-/usr system the top-level ones
// are symlinks into /usr and are recreated as symlinks.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// systemEtc are the few /etc entries the dynamic loader and the C library
// read; the rest of /etc (host names, credentials, the server's own
// configuration) stays invisible.
var systemEtc = []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/alternatives", "/etc/localtime", "/etc/nsswitch.conf"}

// bubblewrap runs the command inside bwrap with every namespace unshared:
// no network, its own PID namespace (bwrap's init is its first process, and
// the kernel kills the rest when it exits), no further user namespaces, a
// view of read-only system directories plus the scratch as the only
// writable host directory, a new session (no TIOCSTI into a terminal) and
// death with the server. bwrap itself runs as the sandbox uid, so the
// command's files on the host belong to that uid and never to root; the
// limits are applied by prlimit inside the sandbox, so each call counts its
// own processes.
type bubblewrap struct {
	id       identity
	fixedArg []string
}

func newBubblewrap(root *scratchRoot, id identity) (*bubblewrap, error) {
	for _, p := range []string{bwrapPath, prlimitPath} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%w: %s is missing (Debian packages bubblewrap and util-linux)", ErrUnavailable, p)
		}
	}
	etc, err := writeIdentityFiles(root, id)
	if err != nil {
		return nil, err
	}
	uid, gid := strconv.Itoa(id.uid), strconv.Itoa(id.gid)
	args := []string{bwrapPath,
		"--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net",
		"--unshare-uts", "--unshare-cgroup", "--disable-userns",
		"--die-with-parent", "--new-session",
		"--uid", uid, "--gid", gid, "--cap-drop", "ALL",
		"--hostname", "sandbox", "--clearenv",
	}
	for _, kv := range scrubbedEnv(sandboxScratch, "/tmp") {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	for _, d := range systemDirs {
		st, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case st.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return nil, fmt.Errorf("%w: %s cannot be read", ErrUnavailable, d)
			}
			args = append(args, "--symlink", target, d)
		case st.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	for _, e := range systemEtc {
		args = append(args, "--ro-bind-try", e, e)
	}
	args = append(args,
		"--ro-bind", filepath.Join(etc, "passwd"), "/etc/passwd",
		"--ro-bind", filepath.Join(etc, "group"), "/etc/group",
		"--proc", "/proc", "--dev", "/dev",
		"--size", strconv.Itoa(tmpfsBytes), "--tmpfs", "/tmp",
	)
	return &bubblewrap{id: id, fixedArg: args}, nil
}

// identityDir holds the passwd and group files shown in the sandbox, which
// name only the sandbox user.
const identityDir = ".sandbox-etc"

// writeIdentityFiles writes passwd and group for the sandbox identity under
// the scratch root, readable by the sandbox uid.
func writeIdentityFiles(root *scratchRoot, id identity) (string, error) {
	dir := filepath.Join(root.dir, identityDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("%w: its identity files cannot be written", ErrWorkdir)
	}
	name, group := "sandbox", "sandbox"
	if id.uid == NobodyID {
		name, group = "nobody", "nogroup"
	}
	files := map[string]string{
		"passwd": fmt.Sprintf("%s:x:%d:%d:%s:%s:/usr/sbin/nologin\n", name, id.uid, id.gid, name, sandboxScratch),
		"group":  fmt.Sprintf("%s:x:%d:\n", group, id.gid),
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
			return "", fmt.Errorf("%w: its identity files cannot be written", ErrWorkdir)
		}
	}
	return dir, nil
}

func (b *bubblewrap) name() string { return ports.RunnerBubblewrap }

func (b *bubblewrap) resolve(program string) (string, error) { return LookPath(program) }

func (b *bubblewrap) limits(l ports.RunLimits) ports.EnforcedLimits { return appliedLimits(l) }

func (b *bubblewrap) command(s *scratch, lim ports.EnforcedLimits, argv []string) (*exec.Cmd, func(outcome)) {
	args := append([]string(nil), b.fixedArg...)
	args = append(args, "--bind", s.dir, sandboxScratch, "--chdir", sandboxScratch, "--")
	args = append(args, limitArgs(lim)...)
	args = append(args, argv...)
	return &exec.Cmd{
		Path: bwrapPath,
		Args: args,
		Env:  scrubbedEnv(sandboxScratch, "/tmp"),
		Dir:  s.dir,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:    true,
			Pdeathsig:  syscall.SIGKILL,
			Credential: credential(b.id),
		},
	}, nil
}

func (b *bubblewrap) receipt(lim ports.EnforcedLimits) ports.Enforcement {
	return receipt(ports.NetworkNone, ports.FilesystemSystemReadOnly, b.id, lim)
}
