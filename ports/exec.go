package ports

import (
	"context"
	"errors"
	"time"
)

// Runner names, as ARROWHEAD_EXEC_RUNNER spells them.
const (
	RunnerSubprocess = "subprocess"
	RunnerBubblewrap = "bubblewrap"
	RunnerContainer  = "container"
)

// What an enforcement receipt says about the network and the filesystem.
const (
	// NetworkHost: the command shares the host's network.
	NetworkHost = "host"
	// NetworkNone: the command has no network interface but loopback.
	NetworkNone = "none"

	// FilesystemHost: the command sees the host filesystem, bounded only by
	// the permissions of its uid; its working directory is the scratch.
	FilesystemHost = "host"
	// FilesystemSystemReadOnly: the command sees read-only system
	// directories, a private /tmp and /dev, and the scratch as the only
	// writable host directory; nothing else of the host is visible.
	FilesystemSystemReadOnly = "system_read_only"
	// FilesystemImageReadOnly: the command sees a container image's root
	// read-only, a tmpfs /tmp, and the scratch as the only writable mount.
	FilesystemImageReadOnly = "image_read_only"
)

// What an enforcement receipt says about the reach of the memory and
// process limits.
const (
	// LimitScopeCgroupV2: the run had its own cgroup v2 group; memory (swap
	// included) and processes are bounded for the whole run.
	LimitScopeCgroupV2 = "cgroup_v2"
	// LimitScopeCgroupV1: the same with the cgroup v1 memory and pids
	// controllers.
	LimitScopeCgroupV1 = "cgroup_v1"
	// LimitScopeProcess: only per-process rlimits applied; sized tmpfs
	// mounts (PrivateTmp, ScratchBytes) bound what the run may store.
	LimitScopeProcess = "process"
	// LimitScopeContainer: the container engine bounds the whole run.
	LimitScopeContainer = "container"
)

// RunLimits bound one command. Every field must be positive.
type RunLimits struct {
	// Wall is the wall-clock budget; the whole process tree is killed when
	// it runs out.
	Wall time.Duration
	// CPUSeconds is the CPU-time budget of each process (RLIMIT_CPU).
	CPUSeconds int
	// MemoryBytes caps each process's address space (RLIMIT_AS), or the
	// container's memory.
	MemoryBytes int64
	// Processes caps how many processes and threads the command may run at
	// once (RLIMIT_NPROC, or the container's pids limit).
	Processes int
	// FileBytes caps the size of any file the command writes (RLIMIT_FSIZE).
	FileBytes int64
	// OpenFiles caps the descriptors each process may hold (RLIMIT_NOFILE).
	OpenFiles int
	// OutputBytes caps stdout and stderr together; the command is killed
	// the moment it writes more.
	OutputBytes int
}

// Scratch is the fresh, private directory one run works in. Paths are
// slash-separated and relative to the scratch root; directories are created
// as needed. Errors never carry a path.
type Scratch interface {
	WriteFile(rel string, data []byte) error
}

// RunRequest is one command to run in a fresh scratch directory.
type RunRequest struct {
	// Argv is the explicit argument vector; no shell is involved. A program
	// name without a slash is looked up on the runner's fixed PATH; one with
	// a slash is taken relative to the scratch directory.
	Argv []string
	// Stdin is the command's whole standard input.
	Stdin []byte
	// Stage, when set, fills the scratch directory before the command
	// starts. Its error aborts the run and is returned as it is.
	Stage  func(ctx context.Context, s Scratch) error
	Limits RunLimits
	// Dir is the working directory, slash-separated and relative to the
	// scratch root; empty means the scratch root itself.
	Dir string
	// Env adds KEY=VALUE variables to the scrubbed environment (a toolchain's
	// cache and proxy settings). PATH is not set here: see PathDirs.
	Env []string
	// PathDirs are absolute host directories put ahead of the runner's fixed
	// PATH (the directories of toolchain binaries found at start).
	PathDirs []string
	// Mounts are host directories the command may see at their own path
	// beyond the runner's fixed view: toolchain roots and a module cache
	// read-only, a per-caller build cache writable. A runner that cannot show
	// a mount as asked refuses the run.
	Mounts []Mount
}

// Mount makes one host directory visible to a command, at the same path or
// at At.
type Mount struct {
	// Host is an absolute, clean host path.
	Host string
	// At, when set, is where the command sees Host instead: an absolute,
	// clean path under /tmp, which every runner makes private to the run,
	// so a mount point can be made there whatever the host looks like. A
	// runner shows such a mount through a descriptor the server opens, so
	// the command needs no access to Host's parents (a root server's
	// module cache under /root, which stays closed to the command); what
	// the command may read inside it is still up to the files' own modes.
	At string
	// Writable allows the command to write there; otherwise it is read-only.
	Writable bool
}

// EnforcedLimits are the limits a runner applied to a run.
type EnforcedLimits struct {
	WallSeconds float64 `json:"wall_seconds" description:"Wall-clock budget in seconds."`
	CPUSeconds  int     `json:"cpu_seconds" description:"CPU-time budget of each process, in seconds."`
	MemoryBytes int64   `json:"memory_bytes" description:"Memory cap in bytes: of the whole run when limit_scope is a cgroup or container, else the address space of each process."`
	Processes   int     `json:"processes" description:"Most processes and threads at once."`
	FileBytes   int64   `json:"file_bytes" description:"Largest file the command may write, in bytes."`
	OpenFiles   int     `json:"open_files" description:"Most open descriptors per process."`
	OutputBytes int     `json:"output_bytes" description:"Cap on stdout and stderr together, in bytes."`
}

// Enforcement is a run's receipt: the controls the runner actually
// applied, never the ones it merely intended. The runner contract suite
// checks each claim against what a command observes from inside.
type Enforcement struct {
	// Network is NetworkHost or NetworkNone.
	Network string `json:"network" description:"none: no network; host: the host's network." enum:"none,host"`
	// Filesystem is one of the Filesystem* views.
	Filesystem string `json:"filesystem" description:"host: the host's files as far as the uid may read them; system_read_only: read-only system directories and the scratch; image_read_only: a read-only image and the scratch." enum:"host,system_read_only,image_read_only"`
	// UID is the host uid the command ran as.
	UID int `json:"uid" description:"The host uid the command ran as."`
	// SeparateUser is true when that uid is not the server's own.
	SeparateUser bool `json:"separate_user" description:"True when that uid is not the server's own."`
	// PIDNamespace is true when the command ran in its own PID namespace,
	// so no process it starts can outlive it.
	PIDNamespace bool `json:"pid_namespace" description:"True when no process the command started could outlive it."`
	// Environment is "scrubbed": only a fixed minimal set of variables.
	Environment string `json:"environment" description:"scrubbed: only a fixed minimal set of variables." enum:"scrubbed"`
	// LimitScope is one of the LimitScope* values.
	LimitScope string `json:"limit_scope" description:"What bounds memory and processes: cgroup_v2 or cgroup_v1 (a group per run, all its processes together), container (the engine), process (per-process rlimits only)." enum:"cgroup_v2,cgroup_v1,container,process"`
	// PrivateTmp is true when /tmp, /var/tmp and /dev/shm were the run's
	// own sized tmpfs mounts, seen by no other run.
	PrivateTmp bool `json:"private_tmp" description:"True when /tmp, /var/tmp and /dev/shm were the run's own sized memory file systems."`
	// ScratchBytes is the size cap of the writable scratch directory, or 0
	// when it is a host directory bounded only by the per-file size.
	ScratchBytes int64          `json:"scratch_bytes" description:"Size cap of the scratch directory in bytes; 0 when only the per-file size bounds it." minimum:"0"`
	Limits       EnforcedLimits `json:"limits" description:"The limits applied."`
}

// RunResult is what one run produced.
type RunResult struct {
	// ExitCode is the command's exit status; a command killed by a signal
	// reports 128 plus the signal number, and -1 when it never reported one.
	ExitCode int
	// TimedOut is true when the wall budget ran out.
	TimedOut bool
	Stdout   []byte
	Stderr   []byte
	// Truncated is true when the output cap was reached (the command was
	// killed at that moment).
	Truncated bool
	Duration  time.Duration
	// Runner is the runner's name (RunnerSubprocess, ...).
	Runner   string
	Enforced Enforcement
}

// ErrProgramNotFound: the request's program is not on the runner's PATH.
// Its text carries no name.
var ErrProgramNotFound = errors.New("the program was not found on the sandbox PATH")

// Runner runs one command per call in a fresh scratch directory under
// fixed limits with a scrubbed environment, and removes the scratch
// afterwards. Nothing a command starts outlives its call. Run's error is
// for failures of the runner itself (the command's own failure is its exit
// code); its text is caller-safe. Implementations are safe for concurrent
// use.
type Runner interface {
	// Name is the runner's name (RunnerSubprocess, ...).
	Name() string
	Run(ctx context.Context, req RunRequest) (RunResult, error)
}
