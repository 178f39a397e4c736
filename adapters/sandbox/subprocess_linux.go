package sandbox

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/arrowhead-go/arrowhead/ports"
)

// subprocess runs the command without an external sandbox binary: the
// server's own binary, re-executed as a helper (helperArg0) in new user,
// mount and PID namespaces, makes the whole host read-only apart from the
// request's writable mounts, gives the run its own sized /tmp, /var/tmp,
// /dev/shm and scratch (a tmpfs at the fixed helperScratch, filled with a
// copy of what was staged), applies the limits, drops every capability and
// execs the command. The PID namespace is what makes "nothing outlives the
// call" hold: a descendant that double-forks and calls setsid leaves the
// process group, but not the namespace, and the kernel kills every process
// in it when its first process (the command) exits. The user namespace
// maps only the sandbox uid and gid, so the command holds no capability
// outside it, and gives each call its own process count (RLIMIT_NPROC is
// counted per user namespace). It shares the host's network, and sees the
// host's files as far as its uid may read them: that is why it runs only
// for a root server, whose commands run as nobody.
type subprocess struct {
	id identity
}

func newSubprocess(id identity) (*subprocess, error) {
	if !id.dropFromRoot {
		// It could only run commands as the server's own uid, in the
		// host's view: they could read the server's data, the repository
		// and $HOME.
		return nil, fmt.Errorf("%w: the subprocess runner would run commands as this server's own uid, able to read its files (it separates commands only when the server runs as root); use bubblewrap", ErrUnavailable)
	}
	return &subprocess{id: id}, nil
}

func (b *subprocess) name() string { return ports.RunnerSubprocess }

func (b *subprocess) resolve(program string, pathDirs []string) (string, error) {
	return lookPath(program, pathDirs)
}

func (b *subprocess) limits(l ports.RunLimits) ports.EnforcedLimits { return appliedLimits(l) }

// helperLimits are the rlimits the helper applies (soft = hard), as
// limitArgs does for prlimit.
func helperLimits(lim ports.EnforcedLimits, scope string) map[int]uint64 {
	m := map[int]uint64{
		unix.RLIMIT_CPU:    uint64(lim.CPUSeconds),
		unix.RLIMIT_NPROC:  uint64(lim.Processes),
		unix.RLIMIT_FSIZE:  uint64(lim.FileBytes),
		unix.RLIMIT_NOFILE: uint64(lim.OpenFiles),
		unix.RLIMIT_CORE:   0,
	}
	if scope == ports.LimitScopeProcess {
		m[unix.RLIMIT_AS] = uint64(lim.MemoryBytes)
	}
	return m
}

// command starts the helper; PathDirs and read-only mounts are already in
// the host's view, read-only once the helper is done.
func (b *subprocess) command(s *scratch, sp runSpec) (*exec.Cmd, func(outcome), error) {
	big, small := tmpSizes(sp.lim)
	spec := helperSpec{Scratch: s.dir, ScratchBytes: big, TmpBytes: big, SmallBytes: small, Dir: sp.req.Dir,
		Limits: helperLimits(sp.lim, sp.scope)}
	spec.Visible = append(spec.Visible, sp.req.PathDirs...)
	for _, m := range sp.req.Mounts {
		switch {
		case m.At != "":
			continue // attached below
		case m.Writable:
			spec.Writable = append(spec.Writable, m.Host)
		default:
			spec.Visible = append(spec.Visible, m.Host)
		}
	}
	// The helper, as the sandbox uid, could not reach these by name.
	attach, err := openAttachments(sp.req)
	if err != nil {
		return nil, nil, err
	}
	spec.Attach = attach.specs(func(_ int, at string) string { return at })
	js, err := json.Marshal(spec)
	if err != nil {
		attach.close()
		return nil, nil, errStart
	}
	var after func(outcome)
	if !attach.empty() {
		after = func(outcome) { attach.close() }
	}
	return &exec.Cmd{
		// The server's own binary, reached through the child's view of
		// itself: its directory need not be open to the sandbox uid.
		Path:       "/proc/self/exe",
		Args:       append([]string{helperArg0, string(js)}, sp.argv...),
		Env:        runEnv(helperScratch, "/tmp", sp.req),
		Dir:        "/",
		ExtraFiles: attach.files,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:    true,
			Pdeathsig:  syscall.SIGKILL,
			Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
			UidMappings: []syscall.SysProcIDMap{
				{ContainerID: b.id.uid, HostID: b.id.uid, Size: 1},
			},
			GidMappings: []syscall.SysProcIDMap{
				{ContainerID: b.id.gid, HostID: b.id.gid, Size: 1},
			},
			GidMappingsEnableSetgroups: true,
			Credential:                 credential(b.id),
			// Only the helper holds it, only inside the new namespaces,
			// and clears it before the command runs.
			AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN},
		},
	}, after, nil
}

func (b *subprocess) receipt(sp runSpec) ports.Enforcement {
	e := receipt(ports.NetworkHost, ports.FilesystemHost, b.id, sp)
	e.PrivateTmp = true
	e.ScratchBytes, _ = tmpSizes(sp.lim)
	return e
}
