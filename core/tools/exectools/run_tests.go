package exectools

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/codeintel"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Limits of a test run that have no setting of their own: toolchains
// start compilers, parallel test binaries and workers (each thread counts
// as a process) and write caches and reports.
const (
	testProcesses = 1024
	testOpenFiles = 4096
	testFileBytes = 256 << 20
	// testCaptureBytes is how much output is read for parsing (go test
	// -json's event stream is several times the text it encodes); what the
	// result shows is still capped at ARROWHEAD_EXEC_MAX_OUTPUT_BYTES.
	testCaptureBytes = 16 << 20
)

// copyDir is where the repository's copy sits in the scratch: below the
// scratch root, which is also the run's HOME and (in the subprocess runner)
// TMPDIR, so the toolchains' caches stay out of the copy and Go does not
// ignore a go.mod sitting at the temporary directory's root.
const copyDir = "repo"

type runTestsInput struct {
	PathPrefix string `json:"path_prefix,omitempty" description:"Repository subtree whose tests to run; empty is the whole repository." maxLength:"$path"`
}

// runTestsOutput is run_tests' result: the run, what ran and why, and the
// parsed results.
type runTestsOutput struct {
	execOutput
	Command string     `json:"command" description:"The command that ran, in the project's copy."`
	Reason  string     `json:"reason" description:"Why that command: the setting, or the project file it was detected from."`
	WorkDir string     `json:"work_dir" description:"The repository-relative directory it ran in (the project root); empty is the repository root."`
	Tests   testReport `json:"tests" description:"Parsed results: counts and each failure's test, file, line and message."`
}

// runTests defines run_tests.
var runTests = catalog.Define[runTestsInput, runTestsOutput](catalog.ToolDef{
	Name:    "run_tests",
	Family:  catalog.FamilyExec,
	Scope:   "exec:run",
	Ceiling: catalog.Ceiling{Var: "ARROWHEAD_RUN_TESTS_PER_MINUTE", Default: 4},
	Description: "Copy the authorized files of the project path_prefix belongs to into the sandbox and run its tests there: " +
		"the configured test command, or one detected from the project (go test for go.mod, pytest or unittest for Python, " +
		"npm test for package.json). Returns the parsed counts and failures with their file and line, and the bounded, " +
		"secret-redacted output. Requires the execution feature to be enabled and granted. " +
		"Example: run_tests(path_prefix=\"src/\").",
	Annotations: catalog.Annotations{Title: "Run tests", OpenWorld: true},
})

// runTests serves run_tests.
func (r *server) runTests(ctx context.Context, call catalog.Call, in runTestsInput) (*catalog.Reply[runTestsOutput], error) {
	c := r.config
	prefix, err := security.CleanRelPrefix(in.PathPrefix)
	if err != nil {
		return nil, catalog.Invalid("Argument 'path_prefix': %s", catalog.Sentence(err.Error()))
	}
	if err := r.authorize(ctx, call, "run_tests"); err != nil {
		return nil, err
	}
	plan, err := r.plan(ctx, call, prefix)
	if err != nil {
		return nil, err
	}
	files, err := r.authorizedFiles(ctx, call, plan.copyPrefix)
	if err != nil {
		return nil, err
	}
	modulePath := ""
	if plan.parser == parseGoJSON {
		modulePath = r.modulePath(ctx, plan.copyPrefix)
	}
	lim := ports.RunLimits{
		Wall:        c.TestWall,
		CPUSeconds:  c.TestCPUSeconds,
		MemoryBytes: c.TestMemoryBytes,
		Processes:   testProcesses,
		FileBytes:   testFileBytes,
		OpenFiles:   testOpenFiles,
		OutputBytes: max(testCaptureBytes, c.MaxOutputBytes),
	}
	res, err := r.exec(ctx, ports.RunRequest{
		Argv:     plan.argv,
		Stage:    func(ctx context.Context, sc ports.Scratch) error { return r.copyTree(ctx, sc, files) },
		Limits:   lim,
		Dir:      path.Join(copyDir, plan.dir),
		Env:      plan.env,
		PathDirs: plan.pathDirs,
		Mounts:   plan.mounts,
	})
	if err != nil {
		return nil, err
	}
	report, shown := parseResults(plan.parser, plan.copyPrefix+plan.fileBase, modulePath, res.Stdout, res.Stderr)
	for i := range report.Failures {
		f := &report.Failures[i]
		f.Test, f.File, f.Message = r.clean(f.Test), r.clean(f.File), r.clean(f.Message)
	}
	command := strings.Join(plan.argv, " ")
	extra := testsText(report)
	exec, framed := r.output("run_tests", res, shown, extra)
	out := runTestsOutput{execOutput: exec, Command: command, Reason: plan.reason, WorkDir: plan.dir, Tests: report}
	head := r.summary("run_tests", exec) + "\nCommand: " + command + " (" + plan.reason + ")."
	if report.Parsed {
		head += fmt.Sprintf("\nTests: %d passed, %d failed, %d skipped.", report.Passed, report.Failed, report.Skipped)
	}
	return catalog.Answer(out, head+"\n"+framed), nil
}

// testsText lists the parsed failures for the framed text answer (their
// text comes from the sandbox, so it stays inside the frame).
func testsText(rep testReport) string {
	if len(rep.Failures) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("failures:\n")
	for _, f := range rep.Failures {
		loc := f.File
		if f.Line > 0 {
			loc += ":" + strconv.Itoa(f.Line)
		}
		first, _, _ := strings.Cut(f.Message, "\n")
		fmt.Fprintf(&b, "- %s (%s): %s\n", f.Test, loc, first)
	}
	return b.String() + "\n"
}

// modulePathBytes bounds the go.mod read for its module line.
const modulePathBytes = 1 << 20

// modulePath is the module path declared in root's go.mod, "" when none.
func (r *server) modulePath(ctx context.Context, root string) string {
	data, _, err := r.repo.Read(ctx, root+"go.mod", modulePathBytes)
	if err != nil {
		return ""
	}
	return codeintel.GoModulePath(data)
}

// authorizedFiles lists the subtree and keeps the files the caller may
// read, refusing a subtree over the file or byte budget before anything
// is copied.
func (r *server) authorizedFiles(ctx context.Context, call catalog.Call, prefix string) ([]ports.FileInfo, error) {
	c := r.config
	listed, truncated, err := r.repo.List(ctx, prefix, c.CopyMaxFiles+1)
	if err != nil {
		if errors.Is(err, ports.ErrNotFound) {
			return nil, catalog.NotFound("Repository subtree")
		}
		return nil, err
	}
	if truncated || len(listed) > c.CopyMaxFiles {
		return nil, catalog.Invalid("The subtree holds more than %d files (ARROWHEAD_EXEC_COPY_MAX_FILES).", c.CopyMaxFiles)
	}
	var files []ports.FileInfo
	var total int64
	for _, f := range listed {
		if !r.may(ctx, call, f.Path) {
			continue
		}
		files = append(files, f)
		total += f.Size
	}
	if len(files) == 0 {
		return nil, catalog.NotFound("Repository subtree")
	}
	if total > int64(c.MaxCopyBytes) {
		return nil, errCopyTooLarge(c)
	}
	return files, nil
}

func errCopyTooLarge(c Config) error {
	return catalog.Invalid("The subtree exceeds %d bytes (ARROWHEAD_EXEC_MAX_COPY_BYTES).", c.MaxCopyBytes)
}

// copyTree copies files into the scratch at their repository-relative
// paths. A file the store now refuses (removed, grown past its cap,
// binary, a symlink) is skipped, as a listing is not a snapshot; the byte
// budget holds over what is actually read.
func (r *server) copyTree(ctx context.Context, sc ports.Scratch, files []ports.FileInfo) error {
	budget := int64(r.config.MaxCopyBytes)
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
			return errCopyTooLarge(r.config)
		}
		if err := sc.WriteFile(copyDir+"/"+f.Path, data); err != nil {
			return err
		}
	}
	return nil
}
