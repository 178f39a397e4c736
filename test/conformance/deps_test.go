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

// TestNoSentryClientInTheServer keeps the SQL parser's raven-go import on
// the stand-in module (shims/raven-go): the real module builds a Sentry
// client and parses a bundled certificate list on every start.
func TestNoSentryClientInTheServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f",
		"{{with .Module}}{{.Path}} {{with .Replace}}{{.Path}}{{end}}{{end}}", module+"/cmd/arrowhead").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	raven := false
	for _, line := range strings.Split(string(out), "\n") {
		path, replacement, _ := strings.Cut(line, " ")
		switch path {
		case "github.com/getsentry/raven-go":
			raven = true
			if replacement != "./shims/raven-go" {
				t.Errorf("raven-go resolves to %q, not the stand-in ./shims/raven-go", replacement)
			}
		case "github.com/certifi/gocertifi":
			t.Error("the server links github.com/certifi/gocertifi, the real raven-go's certificate bundle")
		}
	}
	if !raven {
		t.Log("the server no longer imports raven-go at all; the stand-in and its replace directive can go")
	}
}
