// Package exectools is the exec family: run_snippet runs a short Python
// snippet and run_tests runs the configured test command over a scratch
// copy of the authorized repository subtree, both through a sandboxed
// ports.Runner. The family is doubly gated: it is served only with
// ARROWHEAD_EXEC_ENABLED, and every call needs the execute action on the
// sandbox, which the default policy withholds. Output is sanitized,
// secret-redacted, capped and framed as untrusted data, and every result
// carries the runner's receipt of what it enforced.
package exectools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Ports are what the exec family's tools use.
type Ports struct {
	// Runner runs each command in a fresh scratch directory.
	Runner ports.Runner
	// Authorizer is the per-resource gate (the same one the App uses).
	Authorizer ports.Authorizer
	// Scanner finds and redacts secrets in the output; one per process.
	Scanner *security.Scanner
	// Repo is the repository run_tests copies from; nil leaves run_tests
	// not configured. It should serve the files test toolchains need
	// (go.sum, lock files, fixtures) beside the source.
	Repo ports.RepoStore `port:"optional"`
	// Toolchain is what run_tests knows of the host's toolchains; its zero
	// value runs only ARROWHEAD_EXEC_TEST_COMMAND, looked up on the
	// sandbox PATH.
	Toolchain Toolchain
}

// Config is what the exec family reads from the settings.
type Config struct {
	// Enabled is ARROWHEAD_EXEC_ENABLED: the family's gate.
	Enabled bool `setting:"ARROWHEAD_EXEC_ENABLED"`
	// SnippetWall and TestWall are the wall-clock budgets of one run.
	SnippetWall time.Duration `setting:"ARROWHEAD_EXEC_WALL_SECONDS"`
	TestWall    time.Duration `setting:"ARROWHEAD_EXEC_TEST_WALL_SECONDS"`
	// CPUSeconds and MemoryBytes bound a snippet, TestCPUSeconds and
	// TestMemoryBytes a test run.
	CPUSeconds      int   `setting:"ARROWHEAD_EXEC_CPU_SECONDS"`
	TestCPUSeconds  int   `setting:"ARROWHEAD_EXEC_TEST_CPU_SECONDS"`
	MemoryBytes     int64 `setting:"ARROWHEAD_EXEC_MEMORY_BYTES"`
	TestMemoryBytes int64 `setting:"ARROWHEAD_EXEC_TEST_MEMORY_BYTES"`
	// MaxOutputBytes caps what a result shows of the output.
	MaxOutputBytes int `setting:"ARROWHEAD_EXEC_MAX_OUTPUT_BYTES"`
	// MaxCodeBytes caps a snippet.
	MaxCodeBytes int `setting:"ARROWHEAD_EXEC_MAX_CODE_BYTES"`
	// MaxCopyBytes and CopyMaxFiles cap run_tests' copy of the repository.
	MaxCopyBytes int `setting:"ARROWHEAD_EXEC_MAX_COPY_BYTES"`
	CopyMaxFiles int `setting:"ARROWHEAD_EXEC_COPY_MAX_FILES"`
	// TestCommand is ARROWHEAD_EXEC_TEST_COMMAND split into argv; empty
	// detects the command from the project.
	TestCommand []string
}

// Family is the exec family.
var Family = core.Family[Config, Ports, *server]{
	ID:        catalog.FamilyExec,
	Configure: func(s *settings.Settings, c *Config) { c.TestCommand = s.ExecTestArgv() },
	Gate:      func(c Config) bool { return c.Enabled },
	GateDoc:   "`ARROWHEAD_EXEC_ENABLED` is true",
	Bounds:    func(c Config) catalog.Bounds { return catalog.Bounds{"code": c.MaxCodeBytes} },
	Serve:     newServer,
	Tools: []core.FamilyTool[*server]{
		core.Tool(runSnippet, (*server).runSnippet),
		core.Tool(runTests, (*server).runTests).Needs(func(s *server) bool { return s.repo != nil }, msgTestsNoRepo),
	},
}

// server is what both tools share: the runner, the execute gate, the
// output treatment, and run_tests' repository and toolchains.
type server struct {
	config     Config
	runner     ports.Runner
	authorizer ports.Authorizer
	secrets    *security.Scanner
	repo       ports.RepoStore
	tools      Toolchain
}

func newServer(c Config, p Ports) *server {
	tc := p.Toolchain
	if tc.Command == nil {
		tc.Command = c.TestCommand
	}
	return &server{config: c, runner: p.Runner, authorizer: p.Authorizer, secrets: p.Scanner, repo: p.Repo, tools: tc}
}

// Refusals shared by both tools.
const (
	msgTestsNoRepo = "run_tests is not configured: the repository (ARROWHEAD_REPO_ROOT) is not open."
	msgRunFailed   = "The sandbox could not run the command."
	msgNoProgram   = "The sandbox cannot find the program to run."
)

// execOutput is both tools' structured result.
type execOutput struct {
	ExitCode   int               `json:"exit_code" description:"Exit status; 128 plus the signal number when a signal ended the command, -1 when it reported none." minimum:"-1" maximum:"255"`
	TimedOut   bool              `json:"timed_out" description:"True when the wall-clock budget ran out and the command was killed."`
	Stdout     string            `json:"stdout" description:"Standard output, sanitized and secret-redacted (untrusted data)."`
	Stderr     string            `json:"stderr" description:"Standard error, sanitized and secret-redacted (untrusted data)."`
	Truncated  bool              `json:"truncated" description:"True when the output reached the byte cap (the command was killed there)."`
	DurationMS int64             `json:"duration_ms" description:"Wall-clock duration in milliseconds." minimum:"0"`
	Runner     string            `json:"runner" description:"The runner that ran the command." enum:"subprocess,bubblewrap,container"`
	Enforced   ports.Enforcement `json:"enforced" description:"The controls the runner actually applied."`
	Marker     string            `json:"marker" description:"The untrusted-data marker framing the text answer."`
	Untrusted  bool              `json:"untrusted" description:"Always true."`
}

// authorize is the execute gate. The resource is the tool's name, so a
// policy may grant snippets without tests.
func (b *server) authorize(ctx context.Context, call catalog.Call, tool string) error {
	if !b.authorizer.Authorize(ctx, call.Principal, ports.ActionExecute, ports.Resource{Kind: ports.KindSandbox, ID: tool}).Allowed {
		return catalog.Denied()
	}
	return nil
}

// exec runs req, turning a runner failure into the tool's refusal.
func (b *server) exec(ctx context.Context, req ports.RunRequest) (ports.RunResult, error) {
	res, err := b.runner.Run(ctx, req)
	if err != nil {
		if te, ok := catalog.AsToolError(err); ok {
			return res, te // a refusal raised while staging
		}
		if errors.Is(err, ports.ErrProgramNotFound) {
			return res, catalog.Unavailable(msgNoProgram).WithCause(err)
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return res, ctxErr
		}
		return res, catalog.Failed(msgRunFailed).WithCause(err)
	}
	return res, nil
}

// run runs req and renders its result; tool names the run in the frame.
func (b *server) run(ctx context.Context, tool string, req ports.RunRequest) (*catalog.Reply[execOutput], error) {
	res, err := b.exec(ctx, req)
	if err != nil {
		return nil, err
	}
	out, framed := b.output(tool, res, res.Stdout, "")
	return catalog.Answer(out, b.summary(tool, out)+"\n"+framed), nil
}

// output sanitizes, redacts and re-caps the output and frames it, with
// extra (already clean) text ahead of it inside the frame. stdout is what
// to show of the command's standard output. Output is sanitized before it
// is scanned, so an escape sequence spliced into a secret cannot hide it
// from the scanner; the cap is applied again because sanitizing may grow
// invalid bytes into replacement characters.
func (b *server) output(tool string, res ports.RunResult, stdoutShown []byte, extra string) (execOutput, string) {
	budget := b.config.MaxOutputBytes
	clean := func(raw []byte) (string, bool) {
		text, cut := content.Truncate(b.clean(string(raw)), budget)
		budget -= len(text)
		return text, cut
	}
	stdout, cutOut := clean(stdoutShown)
	stderr, cutErr := clean(res.Stderr)
	body := extra + "stdout:\n" + stdout + "\nstderr:\n" + stderr
	framed := content.Frame(body, content.NewSource("exec", tool, "text", append(append([]byte(nil), res.Stdout...), res.Stderr...)))
	out := execOutput{
		ExitCode:   res.ExitCode,
		TimedOut:   res.TimedOut,
		Stdout:     stdout,
		Stderr:     stderr,
		Truncated:  res.Truncated || cutOut || cutErr,
		DurationMS: res.Duration.Milliseconds(),
		Runner:     res.Runner,
		Enforced:   res.Enforced,
		Marker:     framed.Marker,
		Untrusted:  true,
	}
	return out, framed.Text
}

// clean sanitizes and then secret-redacts text from the sandbox.
func (b *server) clean(s string) string {
	text, _ := b.secrets.Redact(content.SanitizeString(s))
	return text
}

// summary is the text answer's first line: how the run ended and under
// which controls. A command the kernel killed says which limit most
// likely did it: "exited 137" alone tells a model nothing.
func (b *server) summary(tool string, o execOutput) string {
	var end string
	switch {
	case o.TimedOut:
		end = "timed out"
	case o.ExitCode == 128+9 && !o.Truncated: // SIGKILL, not ours for the output cap
		cpu, mem := "ARROWHEAD_EXEC_CPU_SECONDS", "ARROWHEAD_EXEC_MEMORY_BYTES"
		cpuVal, memVal := b.config.CPUSeconds, b.config.MemoryBytes
		if tool == "run_tests" {
			cpu, mem = "ARROWHEAD_EXEC_TEST_CPU_SECONDS", "ARROWHEAD_EXEC_TEST_MEMORY_BYTES"
			cpuVal, memVal = b.config.TestCPUSeconds, b.config.TestMemoryBytes
		}
		end = fmt.Sprintf("was killed (exit 137, SIGKILL), most likely at a limit: CPU time (%s=%d seconds) or memory (%s=%d bytes)",
			cpu, cpuVal, mem, memVal)
	case o.ExitCode == 128+24:
		end = "was killed at its CPU-time limit (exit 152, SIGXCPU)"
	default:
		end = fmt.Sprintf("exited %d", o.ExitCode)
	}
	var notes []string
	if o.Truncated {
		notes = append(notes, "output truncated")
	}
	e := o.Enforced
	notes = append(notes, fmt.Sprintf("runner %s: network %s, filesystem %s, uid %d", o.Runner, e.Network, e.Filesystem, e.UID))
	return fmt.Sprintf("%s %s after %d ms (%s).", tool, end, o.DurationMS, strings.Join(notes, "; "))
}
