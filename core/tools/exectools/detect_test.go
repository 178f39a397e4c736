package exectools_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/tools/exectools"
)

// pythonProject is a Python project under src/ (all the test policy lets
// the caller read) whose tests pass, fail, error and skip under unittest.
var pythonProject = map[string]string{
	"src/pyproject.toml":    "[project]\nname = \"calc\"\n",
	"src/calc/__init__.py":  "def add(a, b):\n    return a + b\n",
	"src/tests/__init__.py": "",
	"src/tests/test_calc.py": `import unittest
from calc import add


class Calc(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_wrong(self):
        self.assertEqual(add(2, 2), 5)

    def test_error(self):
        raise ValueError("boom")

    @unittest.skip("later")
    def test_later(self):
        pass
`,
}

func number(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return -1
}

// TestRunTestsFallsBackToUnittest: without pytest, a Python project runs
// under unittest discovery from its root, and the results are parsed with
// each failure's test id, file and line.
func TestRunTestsFallsBackToUnittest(t *testing.T) {
	e := newEnvWith(t, map[string]string{"ARROWHEAD_EXEC_TEST_COMMAND": ""}, pythonProject,
		exectools.Toolchain{Python: "/usr/bin/python3"})
	out, text, te := e.call(t, runner, "run_tests", map[string]any{"path_prefix": "src/tests/"})
	if te != nil {
		t.Fatal(te)
	}
	if !strings.Contains(out["command"].(string), "-m unittest discover -s tests -t .") || out["work_dir"] != "src" ||
		!strings.Contains(out["reason"].(string), "src/pyproject.toml") || !strings.Contains(out["reason"].(string), "pytest is not installed") {
		t.Fatalf("command %q in %q: %q", out["command"], out["work_dir"], out["reason"])
	}
	tests := out["tests"].(map[string]any)
	if tests["parsed"] != true || number(tests["passed"]) != 1 || number(tests["failed"]) != 2 || number(tests["skipped"]) != 1 {
		t.Fatalf("tests %v\nstderr %s", tests, out["stderr"])
	}
	byTest := map[string]map[string]any{}
	for _, f := range tests["failures"].([]any) {
		m := f.(map[string]any)
		byTest[m["test"].(string)] = m
	}
	wrong, errored := byTest["tests.test_calc.Calc.test_wrong"], byTest["tests.test_calc.Calc.test_error"]
	if wrong == nil || wrong["file"] != "src/tests/test_calc.py" || number(wrong["line"]) != 10 || !strings.Contains(wrong["message"].(string), "4 != 5") {
		t.Errorf("test_wrong: %v", wrong)
	}
	if errored == nil || number(errored["line"]) != 13 || !strings.Contains(errored["message"].(string), "ValueError: boom") {
		t.Errorf("test_error: %v", errored)
	}
	if !strings.Contains(text, "Tests: 1 passed, 2 failed, 1 skipped.") || !strings.Contains(text, "tests.test_calc.Calc.test_wrong (src/tests/test_calc.py:10)") {
		t.Errorf("text %q", text)
	}
}

// TestRunTestsFindsLooseTestModules: a folder of scripts with a test module
// beside them and no project file is a Python project rooted there, and
// test modules inside a package make the directory above it one.
func TestRunTestsFindsLooseTestModules(t *testing.T) {
	// pythonProject's module and its tests, as loose files beside each
	// other.
	files := map[string]string{
		"src/calc.py":       pythonProject["src/calc/__init__.py"],
		"src/test_calc.py":  pythonProject["src/tests/test_calc.py"],
		"src/lib/helper.py": "X = 1\n",
	}
	e := newEnvWith(t, map[string]string{"ARROWHEAD_EXEC_TEST_COMMAND": ""}, files, exectools.Toolchain{Python: "/usr/bin/python3"})
	out, _, te := e.call(t, runner, "run_tests", map[string]any{"path_prefix": "src/"})
	if te != nil {
		t.Fatal(te)
	}
	if out["work_dir"] != "src" || !strings.Contains(out["reason"].(string), "src/test_calc.py marks a Python project") {
		t.Fatalf("command %q in %q: %q", out["command"], out["work_dir"], out["reason"])
	}
	tests := out["tests"].(map[string]any)
	if tests["parsed"] != true || number(tests["passed"]) != 1 || number(tests["failed"]) != 2 || number(tests["skipped"]) != 1 {
		t.Fatalf("tests %v\ncommand %q\nstdout %s\nstderr %s", tests, out["command"], out["stdout"], out["stderr"])
	}
	// A file is run alone: discovery from its directory, with its name as
	// the pattern.
	out, _, te = e.call(t, runner, "run_tests", map[string]any{"path_prefix": "src/test_calc.py"})
	if te != nil {
		t.Fatal(te)
	}
	tests = out["tests"].(map[string]any)
	if !strings.HasSuffix(out["command"].(string), "discover -s . -t . -p test_calc.py") || number(tests["passed"]) != 1 || number(tests["failed"]) != 2 {
		t.Fatalf("command %q: tests %v\nstderr %s", out["command"], tests, out["stderr"])
	}
	// Test modules inside a package run from the directory above it.
	pkg := newEnvWith(t, map[string]string{"ARROWHEAD_EXEC_TEST_COMMAND": ""}, map[string]string{
		"src/pkgs/inventory/__init__.py": "",
		"src/pkgs/inventory/stock.py":    "def count():\n    return 3\n",
		"src/pkgs/inventory/test_stock.py": "import unittest\nfrom inventory.stock import count\n\n\n" +
			"class Stock(unittest.TestCase):\n    def test_count(self):\n        self.assertEqual(count(), 3)\n",
	}, exectools.Toolchain{Python: "/usr/bin/python3"})
	out, _, te = pkg.call(t, runner, "run_tests", map[string]any{"path_prefix": "src/pkgs/inventory/"})
	if te != nil {
		t.Fatal(te)
	}
	tests = out["tests"].(map[string]any)
	if out["work_dir"] != "src/pkgs" || !strings.Contains(out["command"].(string), "discover -s inventory -t .") || number(tests["passed"]) != 1 {
		t.Fatalf("command %q in %q: tests %v\nstderr %s", out["command"], out["work_dir"], tests, out["stderr"])
	}
}

// TestRunTestsDetectsNode: a package.json with a test script runs npm test
// offline; one with npm init's placeholder is no project.
func TestRunTestsDetectsNode(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil || !strings.HasPrefix(npm, "/usr/") {
		t.Skip("npm is not installed under /usr")
	}
	files := map[string]string{
		"src/package.json": `{"name": "t", "version": "1.0.0", "scripts": {"test": "node test.js"}}`,
		"src/test.js":      "console.log('node tests ran'); process.exit(3)\n",
	}
	e := newEnvWith(t, map[string]string{"ARROWHEAD_EXEC_TEST_COMMAND": ""}, files, exectools.Toolchain{NPM: npm})
	out, _, te := e.call(t, runner, "run_tests", map[string]any{"path_prefix": "src"})
	if te != nil {
		t.Fatal(te)
	}
	if number(out["exit_code"]) != 3 || !strings.Contains(out["stdout"].(string), "node tests ran") || !strings.HasSuffix(out["command"].(string), "npm test") {
		t.Fatalf("%v\nstderr %s", out, out["stderr"])
	}
	if err := os.WriteFile(e.repo+"/src/package.json", []byte(`{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, te := e.call(t, runner, "run_tests", map[string]any{"path_prefix": "src"}); te == nil || te.Kind != catalog.KindUnavailable ||
		!strings.Contains(te.Message, "ARROWHEAD_EXEC_TEST_COMMAND") {
		t.Fatalf("placeholder script: %v", te)
	}
}
