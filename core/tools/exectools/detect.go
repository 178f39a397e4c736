package exectools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Toolchain is what run_tests knows of the host's test toolchains. The
// composition root finds it once at start from the server's own PATH;
// every program is an absolute path the sandbox identity can execute, and
// an empty one means the toolchain is absent.
type Toolchain struct {
	// Command is ARROWHEAD_EXEC_TEST_COMMAND with its program resolved to
	// an absolute path; nil detects the command from the project.
	Command []string
	// Go is the go command.
	Go string
	// GoModCache is the host's module cache, shown read-only at
	// goModCacheAt; empty when the sandbox identity could not read it there
	// (modules must then be vendored or absent).
	GoModCache string
	// GoCache returns the caller's own persistent, writable Go build cache
	// (created on first use), so tenants never share a writable cache.
	// Nil leaves the build cache in the scratch directory, cold each run.
	GoCache func(ctx context.Context, owner string) (string, error)
	// Python is python3; Pytest reports whether it imports pytest.
	Python string
	Pytest bool
	// NPM is npm.
	NPM string
}

// Project kinds a test command is detected for.
const (
	kindGo     = "go"
	kindPython = "python"
	kindNode   = "node"
)

// Parsers of a run's output, by the command that produced it.
const (
	parseNone     = ""
	parseGoJSON   = "go-json"
	parsePytest   = "pytest"
	parseUnittest = "unittest"
)

// project is where a path_prefix's project starts and what it is.
type project struct {
	// root is the project root as a repository prefix: "" or "dir/".
	root string
	kind string
	// marker is the file (or directory) that decided it.
	marker string
}

// testPlan is one run_tests invocation, decided before anything is copied.
type testPlan struct {
	// copyPrefix is the subtree copied; dir is the working directory
	// relative to the scratch root.
	copyPrefix string
	dir        string
	argv       []string
	env        []string
	pathDirs   []string
	mounts     []ports.Mount
	// reason says why this command ran, for the result.
	reason string
	parser string
	// fileBase is where the output's file names start, under copyPrefix
	// ("src/" when unittest's top-level directory is src).
	fileBase string
}

// projectMarkers decide a project root, nearest first; within one
// directory the first that applies wins.
var projectMarkers = []struct{ name, kind string }{
	{"go.mod", kindGo},
	{"pyproject.toml", kindPython},
	{"setup.cfg", kindPython},
	{"pytest.ini", kindPython},
	{"setup.py", kindPython},
	{"package.json", kindNode},
}

// pythonTestsDir marks a Python project whose only sign is its tests.
const pythonTestsDir = "tests/"

// looseTestsScan bounds the listing that looks for test modules beside the
// code in a directory with no project file and no tests/ directory.
const looseTestsScan = 2000

// isPythonTestModule reports pytest's default test module names,
// test_*.py and *_test.py.
func isPythonTestModule(name string) bool {
	stem, ok := strings.CutSuffix(name, ".py")
	return ok && (strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test"))
}

// ancestors lists the directories from prefix's own up to the repository
// root, as prefixes ("a/b/", "a/", "").
func ancestors(prefix string) []string {
	dir := strings.TrimSuffix(prefix, "/")
	var out []string
	for dir != "" && dir != "." {
		out = append(out, dir+"/")
		dir = path.Dir(dir)
	}
	return append(out, "")
}

// findProject finds the project prefix belongs to: the nearest directory
// at or above it holding an authorized project file (a package.json only
// when it declares a test script), else the nearest holding an authorized
// tests/ directory (Python), else the nearest holding an authorized test
// module of its own (a folder of scripts with test_*.py beside them, or
// the directory above the package holding it). ok is false when there is
// none.
//
// Test modules alone (looseTests false) do not mark a project: an explicit
// ARROWHEAD_EXEC_TEST_COMMAND keeps running over the prefix's own subtree
// where no project file says otherwise, as its author wrote it for.
func (r *server) findProject(ctx context.Context, call catalog.Call, prefix string, looseTests bool) (project, bool) {
	dirs := ancestors(prefix)
	for _, d := range dirs {
		for _, m := range projectMarkers {
			name := d + m.name
			if !r.readable(ctx, call, name) {
				continue
			}
			if m.kind == kindNode && !r.hasTestScript(ctx, name) {
				continue
			}
			return project{root: d, kind: m.kind, marker: name}, true
		}
	}
	for _, d := range dirs {
		listed, _, err := r.repo.List(ctx, d+pythonTestsDir, 1)
		if err == nil && len(listed) > 0 && r.may(ctx, call, listed[0].Path) {
			return project{root: d, kind: kindPython, marker: d + pythonTestsDir}, true
		}
	}
	if !looseTests {
		return project{}, false
	}
	for i, d := range dirs {
		if module, ok := r.looseTestModule(ctx, call, d); ok {
			// A test module inside a package imports from the directory
			// above the package, as pytest's rootdir insertion does: the
			// project starts at the first directory up that is not one
			// in the copy (an __init__.py the caller may not read is not
			// copied).
			for i+1 < len(dirs) && r.readable(ctx, call, dirs[i]+"__init__.py") {
				i++
			}
			return project{root: dirs[i], kind: kindPython, marker: module}, true
		}
	}
	return project{}, false
}

// looseTestModule finds an authorized test module directly in dir, among
// the first looseTestsScan files under it.
func (r *server) looseTestModule(ctx context.Context, call catalog.Call, dir string) (string, bool) {
	listed, _, err := r.repo.List(ctx, dir, looseTestsScan)
	if err != nil {
		return "", false
	}
	for _, f := range listed {
		name := strings.TrimPrefix(f.Path, dir)
		if !strings.Contains(name, "/") && isPythonTestModule(name) && r.may(ctx, call, f.Path) {
			return f.Path, true
		}
	}
	return "", false
}

// isFile reports whether prefix names a file of the repository rather
// than a directory.
func (r *server) isFile(ctx context.Context, prefix string) bool {
	_, err := r.repo.Stat(ctx, strings.TrimSuffix(prefix, "/"))
	return err == nil
}

// readable reports whether name exists in the repository and the caller
// may read it.
func (r *server) readable(ctx context.Context, call catalog.Call, name string) bool {
	if _, err := r.repo.Stat(ctx, name); err != nil {
		return false
	}
	return r.may(ctx, call, name)
}

func (r *server) may(ctx context.Context, call catalog.Call, name string) bool {
	return r.authorizer.Authorize(ctx, call.Principal, ports.ActionRead, ports.Resource{Kind: ports.KindRepoFile, ID: name}).Allowed
}

// packageJSONBytes bounds the package.json read to find its test script.
const packageJSONBytes = 1 << 20

// hasTestScript reports whether the package.json at name declares a test
// script other than npm init's placeholder, which only fails.
func (r *server) hasTestScript(ctx context.Context, name string) bool {
	data, _, err := r.repo.Read(ctx, name, packageJSONBytes)
	if err != nil {
		return false
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return false
	}
	test := strings.TrimSpace(pkg.Scripts["test"])
	return test != "" && !strings.Contains(test, "no test specified")
}

// Refusals of a run_tests call whose command cannot be decided.
const (
	msgNoProject = "run_tests found no project under path_prefix (no go.mod, pyproject.toml, setup.cfg, pytest.ini, setup.py, " +
		"package.json with a test script, tests/ directory, or test_*.py module the caller may read): set ARROWHEAD_EXEC_TEST_COMMAND."
	msgNoToolchain = "run_tests detected a %s project, but its toolchain (%s) is not on the server's PATH: install it or set ARROWHEAD_EXEC_TEST_COMMAND."
)

// Environment every detected Go run gets: the toolchain works offline from
// the host's module cache (GOPROXY=off; -mod=mod lets go.mod and go.sum be
// completed from that cache), never switches toolchains, and reads no user
// configuration or workspace. GOSUMDB=off: nothing is downloaded, and what
// is in the cache was verified when it was. (Not -trimpath: tests that find
// their testdata through runtime.Caller need real file paths.)
var goEnv = []string{"GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local",
	"GOENV=off", "GOWORK=off", "GOTELEMETRY=off"}

// goModCacheAt is where a run sees the host's module cache: a fixed path
// in the run's private /tmp, shown by the runner through a descriptor the
// server opens, so a root server's cache under /root is served without
// opening /root to the command (ports.Mount.At).
const goModCacheAt = "/tmp/.arrowhead-gomodcache"

// Environment every Python run gets: no bytecode written into the copy.
var pythonEnv = []string{"PYTHONDONTWRITEBYTECODE=1"}

// Environment every npm run gets: offline, and no update check.
var npmEnv = []string{"NPM_CONFIG_OFFLINE=true", "NPM_CONFIG_UPDATE_NOTIFIER=false", "NPM_CONFIG_FUND=false",
	"NPM_CONFIG_AUDIT=false"}

// plan decides the command, the copy and the toolchain set-up for prefix.
// An explicit command wins; it runs in the project root when there is one
// and over the prefix's own subtree otherwise.
func (r *server) plan(ctx context.Context, call catalog.Call, prefix string) (testPlan, error) {
	tc := r.tools
	proj, found := r.findProject(ctx, call, prefix, tc.Command == nil)
	if tc.Command != nil {
		p := testPlan{copyPrefix: prefix, argv: tc.Command, reason: "ARROWHEAD_EXEC_TEST_COMMAND is set", parser: parserFor(tc.Command)}
		if found {
			p.copyPrefix, p.dir = proj.root, strings.TrimSuffix(proj.root, "/")
			p.reason += "; it ran in the project root marked by " + proj.marker
		}
		if p.parser == parseGoJSON && tc.Go != "" {
			if err := r.goSetup(ctx, call, &p); err != nil {
				return testPlan{}, err
			}
		}
		return p, nil
	}
	if !found {
		return testPlan{}, catalog.Unavailable(msgNoProject)
	}
	p := testPlan{copyPrefix: proj.root, dir: strings.TrimSuffix(proj.root, "/")}
	// rel is the prefix inside the project ("sub/" or "sub/file.py"), ""
	// for all of it.
	rel := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSuffix(prefix, "/"), strings.TrimSuffix(proj.root, "/")), "/")
	if rel != "" && strings.HasSuffix(prefix, "/") {
		rel += "/"
	}
	switch proj.kind {
	case kindGo:
		if tc.Go == "" {
			return testPlan{}, catalog.Unavailable(fmt.Sprintf(msgNoToolchain, "Go", "go"))
		}
		pkgs := "./..."
		if rel != "" {
			pkgs = "./" + strings.TrimSuffix(rel, "/") + "/..."
			if r.isFile(ctx, prefix) {
				pkgs = "./" + path.Dir(strings.TrimSuffix(rel, "/"))
			}
		}
		p.argv = []string{tc.Go, "test", "-json", pkgs}
		p.parser = parseGoJSON
		p.reason = proj.marker + " marks a Go module: go test -json on the packages under path_prefix, offline from the module cache"
		if err := r.goSetup(ctx, call, &p); err != nil {
			return testPlan{}, err
		}
	case kindPython:
		if tc.Python == "" {
			return testPlan{}, catalog.Unavailable(fmt.Sprintf(msgNoToolchain, "Python", "python3"))
		}
		srcLayout := r.readableUnder(ctx, call, proj.root+"src/")
		p.env = append(p.env, pythonEnv...)
		if srcLayout {
			p.env = append(p.env, "PYTHONPATH=src")
		}
		p.pathDirs = []string{path.Dir(tc.Python)}
		if tc.Pytest {
			p.argv = []string{tc.Python, "-m", "pytest", "-q", "-rfEs", "--tb=short", "-p", "no:cacheprovider",
				// One module that cannot be imported (a dependency missing
				// from the sandbox) must not hide the rest of the results.
				"--continue-on-collection-errors"}
			if rel != "" {
				p.argv = append(p.argv, strings.TrimSuffix(rel, "/"))
			}
			p.parser = parsePytest
			p.reason = proj.marker + " marks a Python project and pytest is installed: pytest on path_prefix"
		} else {
			start, top, pattern := ".", ".", ""
			switch {
			case rel != "" && !strings.HasSuffix(rel, "/") && r.isFile(ctx, prefix):
				// Discovery starts from a directory: a file is its
				// directory with the file's name as the pattern.
				start, pattern = path.Dir(rel), path.Base(rel)
			case rel != "":
				start = strings.TrimSuffix(rel, "/")
			case srcLayout:
				start, top, p.fileBase = "src", "src", "src/"
			}
			p.argv = []string{tc.Python, "-m", "unittest", "discover", "-s", start, "-t", top}
			if pattern != "" {
				p.argv = append(p.argv, "-p", pattern)
			}
			p.parser = parseUnittest
			p.reason = proj.marker + " marks a Python project and pytest is not installed: unittest discovery"
		}
		if srcLayout {
			p.reason += ", with src/ on PYTHONPATH"
		}
	case kindNode:
		if tc.NPM == "" {
			return testPlan{}, catalog.Unavailable(fmt.Sprintf(msgNoToolchain, "Node", "npm"))
		}
		p.argv = []string{tc.NPM, "test"}
		p.env = append(p.env, npmEnv...)
		p.pathDirs = []string{path.Dir(tc.NPM)}
		p.reason = proj.marker + " declares a test script: npm test (the whole package)"
	}
	return p, nil
}

// goSetup adds the Go toolchain's environment, PATH and mounts to p: the
// toolchain's root read-only, the module cache read-only and the caller's
// own build cache writable.
func (r *server) goSetup(ctx context.Context, call catalog.Call, p *testPlan) error {
	tc := r.tools
	p.env = append(p.env, goEnv...)
	p.pathDirs = append(p.pathDirs, path.Dir(tc.Go))
	p.mounts = append(p.mounts, ports.Mount{Host: path.Dir(path.Dir(tc.Go))})
	if tc.GoModCache != "" {
		p.env = append(p.env, "GOMODCACHE="+goModCacheAt)
		p.mounts = append(p.mounts, ports.Mount{Host: tc.GoModCache, At: goModCacheAt})
	}
	if tc.GoCache != nil {
		dir, err := tc.GoCache(ctx, ownerKey(call.Principal))
		if err != nil {
			return catalog.Failed("The Go build cache could not be prepared.").WithCause(err)
		}
		p.env = append(p.env, "GOCACHE="+dir)
		p.mounts = append(p.mounts, ports.Mount{Host: dir, Writable: true})
	}
	return nil
}

// ownerKey names a caller's build cache: a digest of its subject, so the
// name carries nothing a path could not.
func ownerKey(p ports.Principal) string {
	sum := sha256.Sum256([]byte(p.Key()))
	return hex.EncodeToString(sum[:16])
}

// readableUnder reports whether the caller may read some file under
// prefix.
func (r *server) readableUnder(ctx context.Context, call catalog.Call, prefix string) bool {
	listed, _, err := r.repo.List(ctx, prefix, 64)
	if err != nil {
		return false
	}
	for _, f := range listed {
		if r.may(ctx, call, f.Path) {
			return true
		}
	}
	return false
}

// parserFor picks the parser of an explicit command by what it runs.
func parserFor(argv []string) string {
	base := path.Base(argv[0])
	has := func(s string) bool { return slices.Contains(argv[1:], s) }
	switch {
	case base == "go" && has("test") && has("-json"):
		return parseGoJSON
	case base == "pytest" || strings.HasPrefix(base, "python") && has("pytest"):
		return parsePytest
	case strings.HasPrefix(base, "python") && has("unittest"):
		return parseUnittest
	}
	return parseNone
}
