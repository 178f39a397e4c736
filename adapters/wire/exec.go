package wire

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/arrowhead-go/arrowhead/adapters/fs"
	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/exectools"
	"github.com/arrowhead-go/arrowhead/ports"
)

// snippetInterpreter is the program run_snippet runs.
const snippetInterpreter = "python3"

// execPorts are what the exec family is built from.
type execPorts struct {
	runner    ports.Runner
	repo      ports.RepoStore
	toolchain exectools.Toolchain
}

// Files test toolchains need beside the source, which run_tests' view of
// the repository serves on top of ARROWHEAD_REPO_ALLOWED_EXTENSIONS: module
// and lock files, build configuration, Go assembly, and the usual fixture
// formats under testdata/ and tests/. Binary content is still refused, and
// every file still passes the caller's read authorization.
var (
	execExtensions = []string{".sum", ".mod", ".work", ".cfg", ".ini", ".lock", ".rst", ".s", ".golden", ".txtar",
		".in", ".out", ".input", ".expected", ".csv", ".tsv", ".xml", ".html", ".css", ".tmpl", ".tpl", ".proto",
		".patch", ".diff", ".svg", ".mjs", ".cjs", ".snap"}
	execNames = []string{"go.mod", "go.sum", "go.work", "go.work.sum", "setup.cfg", "pytest.ini", "tox.ini",
		"Pipfile", "Pipfile.lock", "poetry.lock", "MANIFEST.in", "Makefile", "yarn.lock"}
)

// openExec opens the sandboxed runner when the exec family is served, the
// repository view run_tests copies from, and the toolchains it may run.
// Everything the tools will need is proven here, so a misconfigured
// deployment does not start: the runner (its binaries, kernel support and
// scratch root, by a probe run), python3 on the sandbox PATH, and the test
// command's program on the server's PATH.
func (rt *Runtime) openExec(ctx context.Context, s *settings.Settings, repo ports.RepoStore) (execPorts, error) {
	if !exectools.Family.Serves(s) {
		return execPorts{}, nil
	}
	runner, err := sandbox.New(ctx, sandbox.Config{Runner: s.ExecRunner, Workdir: s.ExecWorkdir, ContainerImage: s.ExecContainerImage})
	if err != nil {
		if errors.Is(err, sandbox.ErrWorkdir) {
			return execPorts{}, fmt.Errorf("ARROWHEAD_EXEC_WORKDIR: %w", err)
		}
		return execPorts{}, fmt.Errorf("ARROWHEAD_EXEC_RUNNER=%s: %w", s.ExecRunner, err)
	}
	out := execPorts{runner: runner}
	argv := s.ExecTestArgv()
	if s.ExecRunner != ports.RunnerContainer {
		// The container's programs are the image's, which only the engine
		// can see.
		if _, err := sandbox.LookPath(snippetInterpreter); err != nil {
			return execPorts{}, fmt.Errorf("ARROWHEAD_EXEC_RUNNER=%s: run_snippet needs %s on the sandbox PATH (%s)",
				s.ExecRunner, snippetInterpreter, sandbox.SandboxPATH)
		}
		var warnings []string
		if out.toolchain, warnings, err = findToolchain(ctx, s, argv); err != nil {
			return execPorts{}, err
		}
		for _, w := range warnings {
			rt.Logger.Warn(w)
		}
	} else if len(argv) > 0 {
		out.toolchain.Command = argv
	}
	if repo == nil {
		if len(argv) > 0 {
			return execPorts{}, fmt.Errorf("ARROWHEAD_REPO_ROOT: run_tests (ARROWHEAD_EXEC_TEST_COMMAND) needs the repository: %w", fs.ErrRepoRootMissing)
		}
		return out, nil // run_tests is served as not configured
	}
	view, err := fs.OpenRepo(fs.RepoConfig{
		Root:         s.RepoRoot,
		Extensions:   append(slices.Clone(s.RepoAllowedExtensions), execExtensions...),
		ExcludedDirs: s.RepoExcludedDirs,
		Names:        append(slices.Clone(s.RepoAllowedNames), execNames...),
		MaxFileBytes: int64(s.RepoMaxFileBytes),
	})
	if err != nil {
		return execPorts{}, errors.New("ARROWHEAD_REPO_ROOT: the repository cannot be opened for run_tests")
	}
	rt.closers = append(rt.closers, func(context.Context) error { return view.Close() })
	out.repo = view
	rt.Logger.Info("run_tests toolchains", zap.String("go", out.toolchain.Go), zap.String("python", out.toolchain.Python),
		zap.Bool("pytest", out.toolchain.Pytest), zap.String("npm", out.toolchain.NPM))
	return out, nil
}
