package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// backend is what differs between the runners: how a command is wrapped,
// and what that wrapping enforces.
type backend interface {
	name() string
	// resolve turns the request's program name into what the wrapped
	// command executes, looking on pathDirs first.
	resolve(program string, pathDirs []string) (string, error)
	// limits are the limits the backend will apply for l when only
	// per-process limits hold.
	limits(l ports.RunLimits) ports.EnforcedLimits
	// command builds the process for sp in s, and what to do once it is
	// gone (nil for nothing): the container backend removes a container
	// whose client was killed. Its error refuses the run.
	command(s *scratch, sp runSpec) (*exec.Cmd, func(outcome), error)
	// receipt describes the controls command applies.
	receipt(sp runSpec) ports.Enforcement
}

// Runner is a sandboxed command runner. It implements ports.Runner and is
// safe for concurrent use.
type Runner struct {
	b       backend
	scratch *scratchRoot
	// groups makes a cgroup per run; nil for the container runner, whose
	// engine bounds the whole container.
	groups *cgroups
}

var _ ports.Runner = (*Runner)(nil)

// New builds the runner cfg names and proves it works by running one
// trivial command through it (bubblewrap and subprocess), so a missing
// binary, namespace support or an unreachable scratch root is a start-up
// error rather than a refusal at the first call. It never substitutes
// another runner.
func New(ctx context.Context, cfg Config) (*Runner, error) {
	if cfg.Runner == RunnerAuto {
		cfg.Runner = ports.RunnerBubblewrap
		r, err := New(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("no confined runner can run here, so exec is refused: %w", err)
		}
		return r, nil
	}
	id := sandboxIdentity()
	root, err := openScratchRoot(cfg.Workdir, id)
	if err != nil {
		return nil, err
	}
	var b backend
	switch cfg.Runner {
	case ports.RunnerSubprocess:
		b, err = newSubprocess(id)
	case ports.RunnerBubblewrap:
		b, err = newBubblewrap(root, id)
	case ports.RunnerContainer:
		b, err = newContainer(cfg, id)
	default:
		err = fmt.Errorf("%w: unknown runner (known: %s, %s, %s)", ErrUnavailable,
			ports.RunnerSubprocess, ports.RunnerBubblewrap, ports.RunnerContainer)
	}
	if err != nil {
		return nil, err
	}
	r := &Runner{b: b, scratch: root}
	if cfg.Runner != ports.RunnerContainer {
		r.groups = detectCgroups()
		// No engine may be running where the server starts; the container
		// runner is checked for its binary only.
		if err := r.probe(ctx); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// probeLimits are small but ample for true(1).
var probeLimits = ports.RunLimits{
	Wall: 10 * time.Second, CPUSeconds: 5, MemoryBytes: 256 << 20, Processes: 16,
	FileBytes: 1 << 20, OpenFiles: 64, OutputBytes: 4096,
}

// probe runs true(1) through the whole mechanism.
func (r *Runner) probe(ctx context.Context) error {
	res, err := r.Run(ctx, ports.RunRequest{Argv: []string{"true"}, Limits: probeLimits})
	if err != nil {
		return fmt.Errorf("%w: the %s runner could not start a command as uid %d (%v); it needs user and PID namespaces",
			ErrUnavailable, r.b.name(), r.scratch.id.uid, err)
	}
	if res.ExitCode != 0 || res.TimedOut {
		reason := firstLine(res.Stderr)
		if reason == "" {
			reason = fmt.Sprintf("exit status %d", res.ExitCode)
		}
		return fmt.Errorf("%w: the %s runner's probe failed: %s", ErrUnavailable, r.b.name(), reason)
	}
	return nil
}

// firstLine is the first line of b, bounded, for an operator message.
func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	s := strings.ToValidUTF8(string(line), "?")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// Name returns the runner's name.
func (r *Runner) Name() string { return r.b.name() }

// Run runs req in a fresh scratch directory and removes it afterwards.
func (r *Runner) Run(ctx context.Context, req ports.RunRequest) (ports.RunResult, error) {
	if len(req.Argv) == 0 || !validLimits(req.Limits) {
		return ports.RunResult{}, errInvalidRequest
	}
	if err := validRequest(req); err != nil {
		return ports.RunResult{}, err
	}
	program, err := r.b.resolve(req.Argv[0], req.PathDirs)
	if err != nil {
		return ports.RunResult{}, err
	}
	sp := runSpec{req: req, argv: append([]string{program}, req.Argv[1:]...), lim: r.b.limits(req.Limits),
		scope: ports.LimitScopeContainer}
	if r.groups != nil {
		sp.scope = r.groups.scope
		if sp.scope != ports.LimitScopeProcess {
			// The group holds the run's memory and process count as
			// asked, whatever the server's own rlimits.
			sp.lim.MemoryBytes, sp.lim.Processes = req.Limits.MemoryBytes, req.Limits.Processes
		}
	}

	s, err := r.scratch.create()
	if err != nil {
		return ports.RunResult{}, err
	}
	defer func() { _ = s.remove() }()
	if req.Stage != nil {
		if err := req.Stage(ctx, s); err != nil {
			return ports.RunResult{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return ports.RunResult{}, err
	}
	sp.staged = s.staged
	cmd, after, err := r.b.command(s, sp)
	if err != nil {
		return ports.RunResult{}, err
	}
	var group *runCgroup
	if r.groups != nil {
		if group, err = r.groups.create(sp.lim); err != nil {
			if after != nil {
				after(outcome{}) // nothing ran: only what command holds is let go
			}
			return ports.RunResult{}, err
		}
		defer func() { _ = group.remove() }()
	}
	o, err := runProcess(ctx, cmd, group.start, req.Stdin, req.Limits.Wall, req.Limits.OutputBytes)
	if after != nil {
		after(o)
	}
	if err != nil {
		return ports.RunResult{}, err
	}
	return ports.RunResult{
		ExitCode:  o.exitCode,
		TimedOut:  o.timedOut,
		Stdout:    o.stdout,
		Stderr:    o.stderr,
		Truncated: o.truncated,
		Duration:  o.duration,
		Runner:    r.b.name(),
		Enforced:  r.b.receipt(sp),
	}, nil
}
