package conformance_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/arrowhead-go/arrowhead"

// TestDependencyRule enforces the hexagonal layout: core imports only the
// standard library, ports, core itself and golang.org/x/text; ports imports
// only the standard library.
func TestDependencyRule(t *testing.T) {
	check := func(pattern string, allowed func(string) bool) {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pattern).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pattern, err, out)
		}
		for _, pkg := range strings.Fields(string(out)) {
			if !allowed(pkg) {
				t.Errorf("%s depends on %s, which the dependency rule forbids", pattern, pkg)
			}
		}
	}
	within := func(prefixes ...string) func(string) bool {
		return func(pkg string) bool {
			for _, p := range prefixes {
				if pkg == p || strings.HasPrefix(pkg, p+"/") {
					return true
				}
			}
			return false
		}
	}
	check(module+"/core/...", within(module+"/core", module+"/ports", "golang.org/x/text"))
	check(module+"/ports/...", within(module+"/ports"))
}
