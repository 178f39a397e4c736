package exectools

import (
	"strings"
	"testing"
)

// go test -json events as cmd/test2json writes them: a failing subtest
// (its parent fails with it), a skip, a pass, and a package that does not
// build (go 1.24's build events).
const goEvents = `{"Action":"start","Package":"example.com/m/a"}
{"Action":"run","Package":"example.com/m/a","Test":"TestOuter"}
{"Action":"output","Package":"example.com/m/a","Test":"TestOuter","Output":"=== RUN   TestOuter\n"}
{"Action":"run","Package":"example.com/m/a","Test":"TestOuter/inner"}
{"Action":"output","Package":"example.com/m/a","Test":"TestOuter/inner","Output":"=== RUN   TestOuter/inner\n"}
{"Action":"output","Package":"example.com/m/a","Test":"TestOuter/inner","Output":"    a_test.go:17: got 2, want 3\n"}
{"Action":"output","Package":"example.com/m/a","Test":"TestOuter/inner","Output":"--- FAIL: TestOuter/inner (0.00s)\n"}
{"Action":"fail","Package":"example.com/m/a","Test":"TestOuter/inner"}
{"Action":"fail","Package":"example.com/m/a","Test":"TestOuter"}
{"Action":"skip","Package":"example.com/m/a","Test":"TestLater"}
{"Action":"pass","Package":"example.com/m/a","Test":"TestFine"}
{"Action":"fail","Package":"example.com/m/a"}
{"ImportPath":"example.com/m/b","Action":"build-output","Output":"# example.com/m/b\n"}
{"ImportPath":"example.com/m/b","Action":"build-output","Output":"b/b.go:4:2: undefined: missing\n"}
{"ImportPath":"example.com/m/b","Action":"build-fail"}
{"Action":"fail","Package":"example.com/m/b","FailedBuild":"example.com/m/b"}
`

func TestParseGoTest(t *testing.T) {
	rep, text := parseGoTest("lib/", "example.com/m", []byte(goEvents))
	if !rep.Parsed || rep.Passed != 1 || rep.Skipped != 1 || rep.Failed != 3 || len(rep.Failures) != 2 {
		t.Fatalf("report %+v", rep)
	}
	inner, build := rep.Failures[0], rep.Failures[1]
	if inner.Test != "example.com/m/a.TestOuter/inner" || inner.File != "lib/a/a_test.go" || inner.Line != 17 || inner.Message != "a_test.go:17: got 2, want 3" {
		t.Errorf("subtest %+v", inner)
	}
	if build.Test != "example.com/m/b" || build.File != "lib/b/b.go" || build.Line != 4 || !strings.Contains(build.Message, "undefined: missing") {
		t.Errorf("build failure %+v", build)
	}
	if strings.Contains(string(text), `"Action"`) || !strings.Contains(string(text), "--- FAIL: TestOuter/inner") {
		t.Errorf("text %q", text)
	}
}

// pytest -q -rfEs --tb=short output, as pytest 7 prints it.
const pytestOut = `F.s.                                                                     [100%]
=================================== FAILURES ===================================
_______________________________ TestCalc.test_add ______________________________
tests/test_calc.py:9: in test_add
    assert add(2, 2) == 5
E   assert 4 == 5
E    +  where 4 = add(2, 2)
=========================== short test summary info ============================
SKIPPED [1] tests/test_calc.py:12: later
FAILED tests/test_calc.py::TestCalc::test_add - assert 4 == 5
1 failed, 2 passed, 1 skipped in 0.05s
`

// pytest 7.2.1's output with --continue-on-collection-errors for a module
// that cannot be imported, a fixture that fails at setup, and a failing
// test of the same name (test_bad) in another file.
const pytestErrorsOut = `E.F                                                                      [100%]
==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_broken.py _____________________
ImportError while importing test module '/tmp/pyt/tests/test_broken.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/test_broken.py:1: in <module>
    import not_a_module_arrowhead
E   ModuleNotFoundError: No module named 'not_a_module_arrowhead'
__________________________ ERROR at setup of test_bad __________________________
sub/test_fine.py:5: in broken
    raise RuntimeError("fixture down")
E   RuntimeError: fixture down
=================================== FAILURES ===================================
___________________________________ test_bad ___________________________________
tests/test_fine.py:5: in test_bad
    assert 2 == 3
E   assert 2 == 3
=========================== short test summary info ============================
FAILED tests/test_fine.py::test_bad - assert 2 == 3
ERROR tests/test_broken.py
ERROR sub/test_fine.py::test_bad - RuntimeError: fixture down
1 failed, 1 passed, 2 errors in 0.03s
`

func TestParsePytestErrors(t *testing.T) {
	rep := parsePytestOutput("", []byte(pytestErrorsOut))
	if !rep.Parsed || rep.Passed != 1 || rep.Failed != 3 || len(rep.Failures) != 3 {
		t.Fatalf("report %+v", rep)
	}
	want := []testFailure{
		{Test: "tests/test_fine.py::test_bad", File: "tests/test_fine.py", Line: 5, Message: "assert 2 == 3"},
		{Test: "tests/test_broken.py", File: "tests/test_broken.py", Line: 1, Message: "ModuleNotFoundError: No module named 'not_a_module_arrowhead'"},
		{Test: "sub/test_fine.py::test_bad", File: "sub/test_fine.py", Line: 5, Message: "RuntimeError: fixture down"},
	}
	for i, w := range want {
		if rep.Failures[i] != w {
			t.Errorf("failure %d: %+v, want %+v", i, rep.Failures[i], w)
		}
	}
}

// pytest 7.2.1 on a module whose import fails while handling another
// exception: the chain's last exception is the one reported.
const pytestChainOut = `.                                                                        [100%]
==================================== ERRORS ====================================
_____________________ ERROR collecting tests/test_meta.py ______________________
ImportError while importing test module '/tmp/pyt2/tests/test_meta.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/metadata/__init__.py:563: in from_name
    return next(cls.discover(name=name))
E   StopIteration

During handling of the above exception, another exception occurred:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/test_meta.py:2: in <module>
    V = importlib.metadata.version("not-installed-arrowhead")
/usr/lib/python3.11/importlib/metadata/__init__.py:1008: in version
    return distribution(distribution_name).version
/usr/lib/python3.11/importlib/metadata/__init__.py:981: in distribution
    return Distribution.from_name(distribution_name)
/usr/lib/python3.11/importlib/metadata/__init__.py:565: in from_name
    raise PackageNotFoundError(name)
E   importlib.metadata.PackageNotFoundError: No package metadata was found for not-installed-arrowhead
=========================== short test summary info ============================
ERROR tests/test_meta.py
1 passed, 1 error in 0.04s
`

func TestParsePytestChainedException(t *testing.T) {
	rep := parsePytestOutput("", []byte(pytestChainOut))
	want := testFailure{Test: "tests/test_meta.py", File: "tests/test_meta.py", Line: 2,
		Message: "importlib.metadata.PackageNotFoundError: No package metadata was found for not-installed-arrowhead"}
	if !rep.Parsed || rep.Passed != 1 || rep.Failed != 1 || len(rep.Failures) != 1 || rep.Failures[0] != want {
		t.Fatalf("report %+v", rep)
	}
}

func TestParsePytest(t *testing.T) {
	rep := parsePytestOutput("py/", []byte(pytestOut))
	if !rep.Parsed || rep.Passed != 2 || rep.Failed != 1 || rep.Skipped != 1 || len(rep.Failures) != 1 {
		t.Fatalf("report %+v", rep)
	}
	f := rep.Failures[0]
	if f.Test != "tests/test_calc.py::TestCalc::test_add" || f.File != "py/tests/test_calc.py" || f.Line != 9 ||
		f.Message != "assert 4 == 5\n+  where 4 = add(2, 2)" {
		t.Errorf("failure %+v", f)
	}
	if rep := parsePytestOutput("", []byte("no summary here\n")); rep.Parsed {
		t.Errorf("unrecognised output parsed: %+v", rep)
	}
}
