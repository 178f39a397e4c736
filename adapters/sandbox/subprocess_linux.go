package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/arrowhead-go/arrowhead/ports"
)

// subprocess runs the command directly under prlimit, in its own process
// group and in new user and PID namespaces. The PID namespace is what makes
// "nothing outlives the call" hold: a descendant that double-forks and
// calls setsid leaves the process group, but not the namespace, and the
// kernel kills every process in it when its first process (the command)
// exits. The user namespace maps only the sandbox uid and gid, so the
// command holds no capability outside it, and it gives each call its own
// process count (RLIMIT_NPROC is counted per user namespace), so one fork
// bomb cannot starve a concurrent call. It does not confine the network or
// the filesystem view.
type subprocess struct {
	id identity
}

func newSubprocess(id identity) (*subprocess, error) {
	if !id.dropFromRoot {
		// It could only run commands as the server's own uid, in the
		// host's view: they could read and write the server's data, the
		// repository and $HOME. Nothing would confine their writes.
		return nil, fmt.Errorf("%w: the subprocess runner would run commands as this server's own uid with its files writable (it separates commands only when the server runs as root); use bubblewrap", ErrUnavailable)
	}
	if _, err := os.Stat(prlimitPath); err != nil {
		return nil, fmt.Errorf("%w: %s (util-linux) is missing", ErrUnavailable, prlimitPath)
	}
	return &subprocess{id: id}, nil
}

func (b *subprocess) name() string { return ports.RunnerSubprocess }

func (b *subprocess) resolve(program string, pathDirs []string) (string, error) {
	return lookPath(program, pathDirs)
}

func (b *subprocess) limits(l ports.RunLimits) ports.EnforcedLimits { return appliedLimits(l) }

// command runs in the host's view, where every PathDirs and Mounts
// directory is already visible at its own path, as far as the uid may.
func (b *subprocess) command(s *scratch, sp runSpec) (*exec.Cmd, func(outcome), error) {
	return &exec.Cmd{
		Path: prlimitPath,
		Args: append(limitArgs(sp.lim, sp.scope), sp.argv...),
		Env:  runEnv(s.dir, s.dir, sp.req),
		Dir:  filepath.Join(s.dir, filepath.FromSlash(sp.req.Dir)),
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:    true,
			Pdeathsig:  syscall.SIGKILL,
			Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
			UidMappings: []syscall.SysProcIDMap{
				{ContainerID: b.id.uid, HostID: b.id.uid, Size: 1},
			},
			GidMappings: []syscall.SysProcIDMap{
				{ContainerID: b.id.gid, HostID: b.id.gid, Size: 1},
			},
			// Root may drop its supplementary groups in the child; an
			// unprivileged server may not touch them at all.
			GidMappingsEnableSetgroups: b.id.dropFromRoot,
			Credential:                 credential(b.id),
		},
	}, nil, nil
}

func (b *subprocess) receipt(sp runSpec) ports.Enforcement {
	return receipt(ports.NetworkHost, ports.FilesystemHost, b.id, sp)
}
