package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strconv"
	"syscall"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// containerCPUs is the CPU share a container may use at once.
const containerCPUs = "1"

// containerCleanupTimeout bounds the engine call that removes a container
// whose client was killed.
const containerCleanupTimeout = 15 * time.Second

// engineEnv are the only server variables the engine client sees: how to
// reach the engine. Nothing of them reaches the container, which gets only
// what --env names.
var engineEnv = []string{"HOME", "XDG_RUNTIME_DIR", "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG",
	"DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "CONTAINER_HOST", "CONTAINERS_CONF"}

// container runs the command with docker or podman: no network, a
// read-only image root, every capability dropped, no privilege gain, pids,
// memory and CPU limits, the CPU-time, file-size and descriptor limits as
// ulimits, a non-root user, a tmpfs /tmp and the scratch mounted as the
// only writable directory. The engine's client is this process's child;
// when it has to be killed, the container is removed through the engine
// before the call returns.
type container struct {
	engine string
	image  string
	id     identity
}

func newContainer(cfg Config, id identity) (*container, error) {
	if cfg.ContainerImage == "" {
		return nil, fmt.Errorf("%w: the container runner needs an image", ErrUnavailable)
	}
	engine := cfg.ContainerEngine
	if engine == "" {
		for _, name := range []string{"docker", "podman"} {
			if p, err := exec.LookPath(name); err == nil {
				engine = p
				break
			}
		}
		if engine == "" {
			return nil, fmt.Errorf("%w: neither docker nor podman is on the PATH", ErrUnavailable)
		}
	} else if _, err := exec.LookPath(engine); err != nil {
		return nil, fmt.Errorf("%w: the container engine binary is missing", ErrUnavailable)
	}
	return &container{engine: engine, image: cfg.ContainerImage, id: id}, nil
}

func (b *container) name() string { return ports.RunnerContainer }

// resolve leaves the program to the image's own PATH (led by the request's
// PathDirs, mounted read-only).
func (b *container) resolve(program string, _ []string) (string, error) {
	if program == "" {
		return "", ports.ErrProgramNotFound
	}
	return program, nil
}

// limits are the request's: the engine applies them, not this process.
func (b *container) limits(l ports.RunLimits) ports.EnforcedLimits {
	return ports.EnforcedLimits{
		WallSeconds: l.Wall.Seconds(), CPUSeconds: l.CPUSeconds, MemoryBytes: l.MemoryBytes,
		Processes: l.Processes, FileBytes: l.FileBytes, OpenFiles: l.OpenFiles, OutputBytes: l.OutputBytes,
	}
}

// containerName is a fresh name per run, so a killed client's container
// can be found and removed.
func containerName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "arrowhead-exec-" + hex.EncodeToString(b[:])
}

// runArgs is the engine argv for one run.
func (b *container) runArgs(name, scratchDir string, sp runSpec) []string {
	lim := sp.lim
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	ulimit := func(k string, v int64) string { return k + "=" + n(v) + ":" + n(v) }
	args := []string{b.engine, "run", "--rm", "--interactive", "--name", name,
		"--pull", "never",
		"--network", "none",
		"--read-only",
		"--cap-drop", "ALL",
		"--security-opt", "no-new-privileges",
		"--pids-limit", n(int64(lim.Processes)),
		"--memory", n(lim.MemoryBytes),
		"--memory-swap", n(lim.MemoryBytes),
		"--cpus", containerCPUs,
		"--ulimit", ulimit("cpu", int64(lim.CPUSeconds)),
		"--ulimit", ulimit("fsize", lim.FileBytes),
		"--ulimit", ulimit("nofile", int64(lim.OpenFiles)),
		"--user", strconv.Itoa(b.id.uid) + ":" + strconv.Itoa(b.id.gid),
		"--tmpfs", "/tmp:rw,nosuid,nodev,size=" + strconv.Itoa(tmpfsBytes),
		"--shm-size", strconv.Itoa(tmpfsBytes),
		"--mount", "type=bind,source=" + scratchDir + ",target=" + sandboxScratch,
	}
	// Paths were checked by validRequest: absolute, clean, no ',' or ':'.
	for _, d := range sp.req.PathDirs {
		args = append(args, "--mount", "type=bind,source="+d+",target="+d+",readonly")
	}
	for _, m := range sp.req.Mounts {
		target := m.Host
		if m.At != "" {
			target = m.At // the engine, not the sandbox uid, opens Host
		}
		spec := "type=bind,source=" + m.Host + ",target=" + target
		if !m.Writable {
			spec += ",readonly"
		}
		args = append(args, "--mount", spec)
	}
	args = append(args, "--workdir", path.Join(sandboxScratch, sp.req.Dir))
	env := runEnv(sandboxScratch, "/tmp", sp.req)
	if len(sp.req.PathDirs) == 0 {
		env = env[1:] // the image keeps its own PATH
	}
	for _, kv := range env {
		args = append(args, "--env", kv)
	}
	args = append(args, b.image)
	return append(args, sp.argv...)
}

// removeArgs is the engine argv that stops and removes a run's container.
func (b *container) removeArgs(name string) []string {
	return []string{b.engine, "rm", "--force", name}
}

// clientEnv is the engine client's environment.
func clientEnv() []string {
	env := []string{"PATH=" + SandboxPATH}
	for _, k := range engineEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// command runs the engine client; when the client had to be killed (or
// died of a signal), the container it started may still run, and is
// removed before the call returns.
func (b *container) command(s *scratch, sp runSpec) (*exec.Cmd, func(outcome), error) {
	name := containerName()
	cleanup := func(o outcome) {
		if o.killed || o.exitCode > 128 {
			b.remove(name)
		}
	}
	return &exec.Cmd{
		Path: b.engine,
		Args: b.runArgs(name, s.dir, sp),
		Env:  clientEnv(),
		Dir:  s.dir,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:   true,
			Pdeathsig: syscall.SIGKILL,
		},
	}, cleanup, nil
}

// remove force-removes a run's container through the engine.
func (b *container) remove(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), containerCleanupTimeout)
	defer cancel()
	args := b.removeArgs(name)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = clientEnv()
	_ = cmd.Run()
}

// receipt: /tmp and /dev/shm are the container's own sized tmpfs, and the
// read-only root leaves no /var/tmp to write.
func (b *container) receipt(sp runSpec) ports.Enforcement {
	e := receipt(ports.NetworkNone, ports.FilesystemImageReadOnly, b.id, sp)
	e.PrivateTmp = true
	return e
}
