package exectools

import (
	"context"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Limits of a snippet that have no setting of their own.
const (
	snippetProcesses = 64
	snippetOpenFiles = 256
	snippetFileBytes = 16 << 20
)

// snippetFile is the name the code is written under in the scratch.
const snippetFile = "snippet.py"

// snippetArgv runs the snippet file with python3 in isolated mode: no
// PYTHON* variables, no user site directory, no script directory on
// sys.path.
var snippetArgv = []string{"python3", "-I", snippetFile}

type runSnippetInput struct {
	Code string `json:"code" description:"Python source to run with python3." minLength:"1" maxLength:"$code"`
}

// runSnippet defines run_snippet; "$code" is the family's
// ARROWHEAD_EXEC_MAX_CODE_BYTES bound.
var runSnippet = catalog.Define[runSnippetInput, execOutput](catalog.ToolDef{
	Name:    "run_snippet",
	Scope:   "exec:run",
	Ceiling: catalog.Ceiling{Var: "ARROWHEAD_RUN_SNIPPET_PER_MINUTE", Default: 10},
	Description: "Run a short Python snippet in the sandbox and return its bounded, secret-redacted output. " +
		"Requires the execution feature to be enabled and granted. Example: run_snippet(code=\"print(2 + 2)\").",
	Annotations: catalog.Annotations{Title: "Run snippet", OpenWorld: true},
})

func (r *server) runSnippet(ctx context.Context, call catalog.Call, in runSnippetInput) (*catalog.Reply[execOutput], error) {
	if len(in.Code) > r.config.MaxCodeBytes {
		return nil, catalog.Invalid("Argument 'code' exceeds %d bytes.", r.config.MaxCodeBytes)
	}
	if strings.TrimSpace(in.Code) == "" {
		return nil, catalog.Invalid("Argument 'code' must not be blank.")
	}
	if err := r.authorize(ctx, call, "run_snippet"); err != nil {
		return nil, err
	}
	return r.run(ctx, "run_snippet", ports.RunRequest{
		Argv: snippetArgv,
		Stage: func(_ context.Context, sc ports.Scratch) error {
			return sc.WriteFile(snippetFile, []byte(in.Code))
		},
		Limits: ports.RunLimits{
			Wall:        r.config.SnippetWall,
			CPUSeconds:  r.config.CPUSeconds,
			MemoryBytes: r.config.MemoryBytes,
			Processes:   snippetProcesses,
			FileBytes:   snippetFileBytes,
			OpenFiles:   snippetOpenFiles,
			OutputBytes: r.config.MaxOutputBytes,
		},
	})
}
