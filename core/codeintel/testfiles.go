package codeintel

import (
	"path"
	"strings"
)

// testDirs are directory names whose files are tests or test fixtures by
// the conventions of the common languages.
var testDirs = map[string]bool{"test": true, "tests": true, "testdata": true, "__tests__": true, "spec": true}

// IsTestFile reports whether a repository path is a test or a test
// fixture by naming convention: Go's _test.go, Python's test_*.py,
// *_test.py and conftest.py, the .test. and .spec. files of JavaScript
// and TypeScript, and anything under a test, tests, testdata, __tests__
// or spec directory. It reads names only, never content.
func IsTestFile(p string) bool {
	base := path.Base(p)
	switch {
	case strings.HasSuffix(base, "_test.go"),
		strings.HasSuffix(base, ".py") && (strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py"),
		strings.Contains(base, ".test.") || strings.Contains(base, ".spec."):
		return true
	}
	dir := path.Dir(p)
	if dir == "." {
		return false
	}
	for _, c := range strings.Split(dir, "/") {
		if testDirs[c] {
			return true
		}
	}
	return false
}
