package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path"
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

// stageDir is where bubblewrap shows the staged scratch, read-only, for the
// copy into the run's sized scratch.
const stageDir = "/.stage"

// tmpfsBytes caps the container sandbox's /tmp, and bubblewrap's /var/tmp
// and /dev/shm (never above the run's memory).
const tmpfsBytes = 64 << 20

// copyInScript fills the sized scratch from the staged files, enters the
// working directory ($1) and execs the command (the rest). The script is
// fixed; the caller's argv reaches it only as positional parameters.
const copyInScript = `cp -a ` + stageDir + `/. ` + sandboxScratch + `/ && cd -- "$1" && shift && exec "$@"`

// shPath runs copyInScript.
const shPath = "/bin/sh"

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
	// attachDir is where a root server's run finds its mounts with At
	// before bwrap binds them (see attach_linux.go).
	attachDir string
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
	)
	b := &bubblewrap{id: id, fixedArg: args}
	if id.dropFromRoot {
		// An empty mount point, never written: each run covers it with
		// a tmpfs of its own in its own mount namespace.
		b.attachDir = filepath.Join(root.dir, attachDirName)
		if err := os.Mkdir(b.attachDir, 0o755); err != nil && !os.IsExist(err) {
			return nil, fmt.Errorf("%w: its mount point cannot be made", ErrWorkdir)
		}
	}
	return b, nil
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

func (b *bubblewrap) resolve(program string, pathDirs []string) (string, error) {
	return lookPath(program, pathDirs)
}

func (b *bubblewrap) limits(l ports.RunLimits) ports.EnforcedLimits { return appliedLimits(l) }

// tmpSizes are a run's tmpfs sizes: the scratch and /tmp may each hold the
// run's memory (under a cgroup they share it, since tmpfs pages are
// charged to the group), /var/tmp and /dev/shm a little.
func tmpSizes(lim ports.EnforcedLimits) (scratchAndTmp, small int64) {
	return lim.MemoryBytes, min(tmpfsBytes, lim.MemoryBytes)
}

// command shows the run its own sized tmpfs scratch (filled from the
// staged files by copyInScript), /tmp, /var/tmp and /dev/shm, so no
// writable place is shared with another run or the host beyond the
// request's writable mounts; PathDirs and read-only mounts are bound
// read-only at their own path.
func (b *bubblewrap) command(s *scratch, sp runSpec) (*exec.Cmd, func(outcome), error) {
	big, small := tmpSizes(sp.lim)
	sized := func(n int64, dir string) []string {
		return []string{"--size", strconv.FormatInt(n, 10), "--tmpfs", dir}
	}
	args := append([]string(nil), b.fixedArg...)
	for _, kv := range runEnv(sandboxScratch, "/tmp", sp.req) {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	args = append(args, sized(small, "/dev/shm")...)
	args = append(args, sized(big, "/tmp")...)
	args = append(args, sized(small, "/var/tmp")...)
	args = append(args, sized(big, sandboxScratch)...)
	for _, d := range sp.req.PathDirs {
		args = append(args, "--ro-bind", d, d)
	}
	var attach *attachments
	if b.id.dropFromRoot {
		var err error
		if attach, err = openAttachments(sp.req); err != nil {
			return nil, nil, err
		}
	}
	i := 0
	for _, m := range sp.req.Mounts {
		flag := "--ro-bind"
		if m.Writable {
			flag = "--bind"
		}
		switch {
		case m.At == "":
			args = append(args, flag, m.Host, m.Host)
		case attach.empty():
			// The server's own uid, which bwrap runs as, reaches Host.
			args = append(args, flag, m.Host, m.At)
		default:
			args = append(args, flag, attachPoint(b.attachDir, i), m.At)
			i++
		}
	}
	dir := path.Join(sandboxScratch, sp.req.Dir)
	if sp.staged || sp.req.Dir != "" {
		args = append(args, "--ro-bind", s.dir, stageDir, "--chdir", sandboxScratch, "--",
			shPath, "-c", copyInScript, "sh", dir)
	} else {
		args = append(args, "--chdir", sandboxScratch, "--")
	}
	args = append(args, limitArgs(sp.lim, sp.scope)...)
	args = append(args, sp.argv...)
	cmd := &exec.Cmd{
		Path: bwrapPath,
		Args: args,
		Env:  scrubbedEnv(sandboxScratch, "/tmp"),
		Dir:  s.dir,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:    true,
			Pdeathsig:  syscall.SIGKILL,
			Credential: credential(b.id),
		},
	}
	if attach.empty() {
		return cmd, nil, nil
	}
	if err := attachCommand(cmd, attach, b.attachDir); err != nil {
		attach.close()
		return nil, nil, err
	}
	return cmd, func(outcome) { attach.close() }, nil
}

func (b *bubblewrap) receipt(sp runSpec) ports.Enforcement {
	e := receipt(ports.NetworkNone, ports.FilesystemSystemReadOnly, b.id, sp)
	e.PrivateTmp = true
	e.ScratchBytes, _ = tmpSizes(sp.lim)
	return e
}
