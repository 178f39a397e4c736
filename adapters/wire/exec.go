package wire

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/arrowhead-go/arrowhead/adapters/fs"
	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// snippetInterpreter is the program run_snippet runs.
const snippetInterpreter = "python3"

// serves reports whether the profile selects family.
func serves(s *settings.Settings, family catalog.Family) bool {
	return slices.Contains(catalog.Profiles[s.Profile], family)
}

// openExec opens the sandboxed runner when the exec family is served, and
// the repository run_tests copies from when a test command is configured.
// Everything the tools will need is proven here, so a misconfigured
// deployment does not start: the runner (its binaries, kernel support and
// scratch root, by a probe run), python3 and the test command's program on
// the sandbox PATH, and the repository root (opened once, by openRepo).
func (rt *Runtime) openExec(ctx context.Context, s *settings.Settings, repo ports.RepoStore) (ports.Runner, ports.RepoStore, error) {
	if !s.ExecEnabled || !serves(s, catalog.FamilyExec) {
		return nil, nil, nil
	}
	runner, err := sandbox.New(ctx, sandbox.Config{Runner: s.ExecRunner, Workdir: s.ExecWorkdir, ContainerImage: s.ExecContainerImage})
	if err != nil {
		if errors.Is(err, sandbox.ErrWorkdir) {
			return nil, nil, fmt.Errorf("ARROWHEAD_EXEC_WORKDIR: %w", err)
		}
		return nil, nil, fmt.Errorf("ARROWHEAD_EXEC_RUNNER=%s: %w", s.ExecRunner, err)
	}
	argv := s.ExecTestArgv()
	if s.ExecRunner != ports.RunnerContainer {
		// The container's programs are the image's, which only the engine
		// can see.
		if _, err := sandbox.LookPath(snippetInterpreter); err != nil {
			return nil, nil, fmt.Errorf("ARROWHEAD_EXEC_RUNNER=%s: run_snippet needs %s on the sandbox PATH (%s)",
				s.ExecRunner, snippetInterpreter, sandbox.SandboxPATH)
		}
		if len(argv) > 0 {
			if _, err := sandbox.LookPath(argv[0]); err != nil {
				return nil, nil, fmt.Errorf("ARROWHEAD_EXEC_TEST_COMMAND: its program is not on the sandbox PATH (%s)", sandbox.SandboxPATH)
			}
		}
	}
	if len(argv) == 0 {
		return runner, nil, nil // run_tests is served as not configured
	}
	if repo == nil {
		return nil, nil, fmt.Errorf("ARROWHEAD_REPO_ROOT: run_tests (ARROWHEAD_EXEC_TEST_COMMAND) needs the repository: %w", fs.ErrRepoRootMissing)
	}
	return runner, repo, nil
}
