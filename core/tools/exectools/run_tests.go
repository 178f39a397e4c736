package exectools

import (
	"context"
	"errors"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Limits of a test run that have no setting of their own: test runners
// start workers and write caches and reports.
const (
	testProcesses = 256
	testOpenFiles = 1024
	testFileBytes = 64 << 20
)

type runTestsInput struct {
	PathPrefix string `json:"path_prefix,omitempty" description:"Repository subtree to copy and test; empty is the whole repository." maxLength:"$path"`
}

// runTests defines run_tests.
func runTests(*settings.Settings) catalog.Tool[runTestsInput, execOutput] {
	return catalog.Define[runTestsInput, execOutput](catalog.ToolDef{
		Name:    "run_tests",
		Family:  catalog.FamilyExec,
		Scope:   "exec:run",
		Ceiling: catalog.Ceiling{Var: "ARROWHEAD_RUN_TESTS_PER_MINUTE", Default: 4},
		Description: "Copy the authorized repository subtree into the sandbox and run the configured test command there, " +
			"returning its bounded, secret-redacted output. Requires the execution feature to be enabled and granted. " +
			"Example: run_tests(path_prefix=\"src/\").",
		Annotations: catalog.Annotations{Title: "Run tests", OpenWorld: true},
		Bounds:      catalog.Bounds{"path": security.MaxPathBytes},
	})
}

// testRunner is run_tests: the sandbox, the repository it copies from and
// the configured command.
type testRunner struct {
	sandbox
	repo ports.RepoStore
	argv []string
}

func (r testRunner) run(ctx context.Context, call catalog.Call, in runTestsInput) (*catalog.Reply[execOutput], error) {
	s := r.settings
	prefix, err := security.CleanRelPrefix(in.PathPrefix)
	if err != nil {
		return nil, catalog.Invalid("Argument 'path_prefix': %s", catalog.Sentence(err.Error()))
	}
	if err := r.authorize(ctx, call, "run_tests"); err != nil {
		return nil, err
	}
	files, err := r.authorizedFiles(ctx, call, prefix)
	if err != nil {
		return nil, err
	}
	return r.sandbox.run(ctx, "run_tests", ports.RunRequest{
		Argv:   r.argv,
		Stage:  func(ctx context.Context, sc ports.Scratch) error { return r.copyTree(ctx, sc, files) },
		Limits: r.limits(settings.Seconds(s.ExecTestWallSeconds), testProcesses, testOpenFiles, testFileBytes),
	})
}

// authorizedFiles lists the subtree and keeps the files the caller may
// read, refusing a subtree over the file or byte budget before anything
// is copied.
func (r testRunner) authorizedFiles(ctx context.Context, call catalog.Call, prefix string) ([]ports.FileInfo, error) {
	s := r.settings
	listed, truncated, err := r.repo.List(ctx, prefix, s.ExecCopyMaxFiles+1)
	if err != nil {
		if errors.Is(err, ports.ErrNotFound) {
			return nil, catalog.NotFound("Repository subtree")
		}
		return nil, err
	}
	if truncated || len(listed) > s.ExecCopyMaxFiles {
		return nil, catalog.Invalid("The subtree holds more than %d files (ARROWHEAD_EXEC_COPY_MAX_FILES).", s.ExecCopyMaxFiles)
	}
	var files []ports.FileInfo
	var total int64
	for _, f := range listed {
		if !r.authorizer.Authorize(ctx, call.Principal, ports.ActionRead, ports.Resource{Kind: ports.KindRepoFile, ID: f.Path}).Allowed {
			continue
		}
		files = append(files, f)
		total += f.Size
	}
	if len(files) == 0 {
		return nil, catalog.NotFound("Repository subtree")
	}
	if total > int64(s.ExecMaxCopyBytes) {
		return nil, errCopyTooLarge(s)
	}
	return files, nil
}

func errCopyTooLarge(s *settings.Settings) error {
	return catalog.Invalid("The subtree exceeds %d bytes (ARROWHEAD_EXEC_MAX_COPY_BYTES).", s.ExecMaxCopyBytes)
}

// copyTree copies files into the scratch at their repository-relative
// paths. A file the store now refuses (removed, grown past its cap,
// binary, a symlink) is skipped, as a listing is not a snapshot; the byte
// budget holds over what is actually read.
func (r testRunner) copyTree(ctx context.Context, sc ports.Scratch, files []ports.FileInfo) error {
	budget := int64(r.settings.ExecMaxCopyBytes)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, _, err := r.repo.Read(ctx, f.Path, 0)
		switch {
		case err == nil:
		case errors.Is(err, ports.ErrNotFound), errors.Is(err, ports.ErrTooLarge), errors.Is(err, ports.ErrBinary),
			errors.Is(err, ports.ErrOutsideJail), errors.Is(err, ports.ErrNotRegular):
			continue
		default:
			return err
		}
		if budget -= int64(len(data)); budget < 0 {
			return errCopyTooLarge(r.settings)
		}
		if err := sc.WriteFile(f.Path, data); err != nil {
			return err
		}
	}
	return nil
}
