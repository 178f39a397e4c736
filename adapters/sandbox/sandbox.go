// Package sandbox runs untrusted commands for the exec family. Every run
// gets a fresh scratch directory, an explicit argv (never a shell), a
// scrubbed environment, kernel-enforced resource limits, an unprivileged
// uid when the server is root, none of the server's descriptors above 2,
// its own sized /tmp, /var/tmp, /dev/shm and scratch, a cgroup of its own
// where the host allows one, and a process tree that cannot outlive the
// call. Three runners implement ports.Runner:
//
//   - bubblewrap (chosen by RunnerAuto): bwrap with every namespace
//     unshared, no network, read-only system directories and nothing else
//     of the host; it needs no root where unprivileged user namespaces are
//     enabled;
//   - subprocess: the server's own binary re-executed as a helper in new
//     user, mount and PID namespaces (see helperArg0): the host read-only,
//     the host's network; refused unless the server runs as root, since a
//     non-root server's commands would run as its own uid, able to read its
//     files;
//   - container: docker or podman with no network, a read-only image root,
//     no capabilities, pids, memory and CPU limits, a non-root user.
//
// Each result carries a receipt (ports.Enforcement) of the controls that
// were applied, including whether memory and processes were bounded per
// run (a cgroup v2 or v1 group) or only per process. New refuses a runner
// whose binary or kernel support is missing; it never falls back to a
// weaker one.
//
// Inside bwrap, resource limits are set by util-linux prlimit(1) placed in
// front of the command: it applies them to itself with prlimit(2) and then
// execs the command, so they hold from the command's first instruction.
// The subprocess runner's helper sets them itself before its exec.
package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/ports"
)

// RunnerAuto asks New for the confined runner this host offers:
// bubblewrap, which needs no root where unprivileged user namespaces are
// enabled. Where it cannot run, New refuses and says why rather than fall
// back to a runner that would leave the host writable.
const RunnerAuto = "auto"

// Config selects and places a runner.
type Config struct {
	// Runner is RunnerAuto, ports.RunnerSubprocess, RunnerBubblewrap or
	// RunnerContainer (ARROWHEAD_EXEC_RUNNER).
	Runner string
	// Workdir is the scratch root (ARROWHEAD_EXEC_WORKDIR); each run gets a
	// fresh directory under it. It is created when missing.
	Workdir string
	// ContainerImage is the image the container runner starts
	// (ARROWHEAD_EXEC_CONTAINER_IMAGE).
	ContainerImage string
	// ContainerEngine is the docker or podman binary; empty looks for
	// docker, then podman, on the server's PATH.
	ContainerEngine string
}

// Construction errors; New wraps one of them with the reason.
var (
	// ErrUnavailable: the configured runner's binary or kernel support is
	// missing, or it failed its start-up probe.
	ErrUnavailable = errors.New("the configured runner cannot run here")
	// ErrWorkdir: the scratch root cannot be created or used.
	ErrWorkdir = errors.New("the scratch root cannot be used")
)

// SandboxPATH is the fixed PATH every command runs with, and the only one
// program names are looked up on: never the server's own PATH.
const SandboxPATH = "/usr/local/bin:/usr/bin:/bin"

// NobodyID is the uid and gid commands run as when the server is root.
const NobodyID = 65534

// prlimitPath is util-linux prlimit, which applies the limits and execs
// the command. A variable only so tests can point it at nothing.
var prlimitPath = "/usr/bin/prlimit"

// scratchPrefix names every run's scratch directory under the workdir.
const scratchPrefix = "run-"

// environmentScrubbed is the receipt's word for the fixed environment.
const environmentScrubbed = "scrubbed"

// identity is the uid and gid a command runs as.
type identity struct {
	uid, gid int
	// separate is true when that is not the server's own uid.
	separate bool
	// dropFromRoot is true when the server is root and must switch.
	dropFromRoot bool
}

// sandboxIdentity returns nobody when the server is root, and the server's
// own ids otherwise (an unprivileged process cannot switch).
func sandboxIdentity() identity {
	if os.Geteuid() == 0 {
		return identity{uid: NobodyID, gid: NobodyID, separate: true, dropFromRoot: true}
	}
	return identity{uid: os.Getuid(), gid: os.Getgid()}
}

// LookPath resolves a program name on SandboxPATH, as the subprocess and
// bubblewrap runners do. A name with a slash is left alone: it is relative
// to the scratch directory the command starts in. The error is
// ports.ErrProgramNotFound.
func LookPath(name string) (string, error) { return lookPath(name, nil) }

// lookPath resolves name on pathDirs, then SandboxPATH.
func lookPath(name string, pathDirs []string) (string, error) {
	if name == "" {
		return "", ports.ErrProgramNotFound
	}
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range append(slices.Clone(pathDirs), filepath.SplitList(SandboxPATH)...) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ports.ErrProgramNotFound
}

// limitArgs is prlimit's argv prefix for lim: soft and hard limits equal,
// so a process cannot raise its own, and no core dumps. Under a per-run
// cgroup the address space is left alone: the group bounds the memory the
// run really uses, and runtimes that reserve far more address space than
// they touch (the Go toolchain) would fail under RLIMIT_AS.
func limitArgs(lim ports.EnforcedLimits, scope string) []string {
	pair := func(flag string, v int64) string {
		s := strconv.FormatInt(v, 10)
		return "--" + flag + "=" + s + ":" + s
	}
	args := []string{prlimitPath, pair("cpu", int64(lim.CPUSeconds))}
	if scope == ports.LimitScopeProcess {
		args = append(args, pair("as", lim.MemoryBytes))
	}
	return append(args,
		pair("nproc", int64(lim.Processes)),
		pair("fsize", lim.FileBytes),
		pair("nofile", int64(lim.OpenFiles)),
		"--core=0:0",
		"--",
	)
}

// errRequestShape refuses a request whose working directory, environment,
// PATH directories or mounts are malformed: a programming error in the
// caller. Its text carries none of them.
var errRequestShape = errors.New("the run request's directory, environment, PATH directories or mounts are malformed")

// validRequest checks the request's placement fields: Dir local to the
// scratch, Env as KEY=VALUE without PATH, PathDirs and Mount hosts absolute,
// clean, existing directories that are not the root, /proc or /dev.
func validRequest(req ports.RunRequest) error {
	if req.Dir != "" {
		if d := filepath.FromSlash(req.Dir); !filepath.IsLocal(d) || strings.ContainsRune(req.Dir, 0) {
			return errRequestShape
		}
	}
	for _, kv := range req.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || k == "PATH" || strings.ContainsAny(k, " \t\n") || strings.ContainsRune(kv, 0) {
			return errRequestShape
		}
	}
	hostDir := func(p string) bool {
		if p == "" || !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" || strings.ContainsAny(p, ",:\x00") {
			return false
		}
		for _, reserved := range []string{"/proc", "/dev", sandboxScratch, stageDir} {
			if p == reserved || strings.HasPrefix(p, reserved+"/") {
				return false
			}
		}
		st, err := os.Stat(p)
		return err == nil && st.IsDir()
	}
	for _, d := range req.PathDirs {
		if !hostDir(d) {
			return errRequestShape
		}
	}
	seen := map[string]bool{}
	for _, m := range req.Mounts {
		if !hostDir(m.Host) {
			return errRequestShape
		}
		if m.At != "" {
			if !validAt(m.At) || seen[m.At] {
				return errRequestShape
			}
			seen[m.At] = true
		}
	}
	return nil
}

// helperScratch is where the helper shows the run's scratch: a fixed path,
// as bubblewrap's /scratch is, because build and test caches (Go's) key
// their entries by the package directory, and a path that changed with
// every run would make every run rebuild and rerun. The host stays
// read-only, so the mount point is made inside the private /tmp; the name
// keeps it clear of the host paths a request may bind there.
const helperScratch = "/tmp/.arrowhead-scratch"

// attachRoot is the one place a mount's At may point: every runner gives
// the run its own /tmp, so a mount point can be made there even where the
// rest of the host is read-only (the subprocess runner's view).
const attachRoot = "/tmp/"

// validAt reports whether at is a clean path strictly under attachRoot,
// clear of the subprocess runner's scratch and of the characters the
// runners' argument syntaxes give a meaning.
func validAt(at string) bool {
	return strings.HasPrefix(at, attachRoot) && len(at) > len(attachRoot) && filepath.Clean(at) == at &&
		!strings.ContainsAny(at, ",:\x00") && at != helperScratch && !strings.HasPrefix(at, helperScratch+"/")
}

// runEnv is the whole environment of a run: the scrubbed base with PATH
// led by the request's PathDirs, then the request's own variables (a
// later one wins, so a request may set HOME or TMPDIR).
func runEnv(home, tmp string, req ports.RunRequest) []string {
	env := scrubbedEnv(home, tmp)
	if len(req.PathDirs) > 0 {
		env[0] = "PATH=" + strings.Join(req.PathDirs, ":") + ":" + SandboxPATH
	}
	return append(env, req.Env...)
}

// validLimits reports whether every limit is positive.
func validLimits(l ports.RunLimits) bool {
	return l.Wall > 0 && l.CPUSeconds > 0 && l.MemoryBytes > 0 && l.Processes > 0 &&
		l.FileBytes > 0 && l.OpenFiles > 0 && l.OutputBytes > 0
}

// errInvalidRequest refuses a request without an argv or with a
// non-positive limit: a programming error in the caller.
var errInvalidRequest = errors.New("the run request needs an argv and positive limits")

// receipt is a run's enforcement receipt. Every process a runner starts is
// the first of its own PID namespace, with the scrubbed environment.
func receipt(network, filesystem string, id identity, sp runSpec) ports.Enforcement {
	return ports.Enforcement{
		Network:      network,
		Filesystem:   filesystem,
		UID:          id.uid,
		SeparateUser: id.separate,
		PIDNamespace: true,
		Environment:  environmentScrubbed,
		LimitScope:   sp.scope,
		Limits:       sp.lim,
	}
}

// runSpec is one run as a backend builds it.
type runSpec struct {
	req ports.RunRequest
	// argv has the program resolved.
	argv []string
	lim  ports.EnforcedLimits
	// scope is the reach of the memory and process limits
	// (ports.LimitScope*).
	scope string
	// staged is true when the scratch holds staged files.
	staged bool
}
