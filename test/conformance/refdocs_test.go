package conformance_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/config"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/internal/refdocs"
)

// repoRoot is the repository root, from this package's directory.
const repoRoot = "../.."

// maxDiffLines bounds the diff a drift failure prints: the first
// differences are enough to see what changed.
const maxDiffLines = 60

// TestReferenceDocsAreCurrent regenerates the tool reference, the
// configuration reference and .env.example in memory and fails when a
// committed file differs, printing the first differences and the command
// that regenerates them.
func TestReferenceDocsAreCurrent(t *testing.T) {
	files, err := refdocs.Files(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	regenerate := fmt.Sprintf("regenerate with `%s` from the repository root and commit the result", refdocs.Command)
	for _, f := range files {
		committed, err := os.ReadFile(filepath.Join(repoRoot, f.Path))
		if err != nil {
			t.Errorf("%s is missing; %s", f.Path, regenerate)
			continue
		}
		if !bytes.Equal(committed, f.Body) {
			t.Errorf("%s differs from what the code generates; %s\n%s", f.Path, regenerate, firstLines(lineDiff(string(committed), string(f.Body)), maxDiffLines))
		}
	}
}

// TestReferenceDocsAreDeterministic: two generations are identical, and
// nothing machine-specific (the working directory, GOPATH, the home
// directory) leaks into them.
func TestReferenceDocsAreDeterministic(t *testing.T) {
	first, err := refdocs.Files(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	second, err := refdocs.Files(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	machine := []string{cwd, filepath.Dir(filepath.Dir(cwd)), os.Getenv("GOPATH"), home, os.TempDir()}
	for i, f := range first {
		if !bytes.Equal(f.Body, second[i].Body) {
			t.Errorf("%s differs between two generations", f.Path)
		}
		for _, m := range machine {
			if len(m) > 1 && bytes.Contains(f.Body, []byte(m)) {
				t.Errorf("%s contains the machine path %s", f.Path, m)
			}
		}
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("  ... (%d more diff lines)\n", len(lines)-n)
}

// gateClause is one clause of a gate's stated condition.
var gateClause = regexp.MustCompile("^`(ARROWHEAD_[A-Z0-9_]+)` is (true|not empty)$")

// TestGateDocsAgreeWithGates holds each family's printed gate condition
// (core.Family.GateDoc) to its Gate function: with the full profile, the
// variables it names, set as wire.EveryFamilyEnv sets them, open the gate on
// their own, and each of them back at its default closes it. It also proves
// EveryFamilyEnv, which the reference and the snapshots list under, serves
// every family.
func TestGateDocsAgreeWithGates(t *testing.T) {
	open := wire.EveryFamilyEnv()
	openListing := servedFamilies(t, open)
	for _, g := range wire.Gates() {
		if !openListing[g.Family] {
			t.Errorf("the %s family lists no tool under wire.EveryFamilyEnv: set what opens its gate there", g.Family)
		}
		if g.Gated != (g.Condition != "") {
			t.Errorf("the %s family: set GateDoc exactly when Gate is set (gated=%v, GateDoc=%q)", g.Family, g.Gated, g.Condition)
			continue
		}
		if !g.Gated {
			continue
		}
		only := map[string]string{"ARROWHEAD_PROFILE": "full"}
		var named []string
		for _, clause := range strings.Split(g.Condition, " and ") {
			m := gateClause.FindStringSubmatch(clause)
			if m == nil {
				t.Errorf("the %s family's GateDoc clause %q: state each clause as \"`VAR` is true\" or \"`VAR` is not empty\", joined by \" and \"", g.Family, clause)
				continue
			}
			name, cond := m[1], m[2]
			def, defined := settings.DefaultOf(name)
			value, set := open[name]
			switch {
			case !defined:
				t.Errorf("the %s family's gate names %s, which is not a setting", g.Family, name)
			case !set:
				t.Errorf("wire.EveryFamilyEnv does not set %s, which the %s family's gate names", name, g.Family)
			case cond == "true" && (value != "true" || def == "true"):
				t.Errorf("%s: the %s gate says it must be true; EveryFamilyEnv sets %q over the default %q", name, g.Family, value, def)
			case cond == "not empty" && (value == "" || def != ""):
				t.Errorf("%s: the %s gate says it must not be empty; EveryFamilyEnv sets %q over the default %q", name, g.Family, value, def)
			}
			only[name] = value
			named = append(named, name)
		}
		if !servedFamilies(t, only)[g.Family] {
			t.Errorf("the %s family's stated condition %q holds, but its gate stays closed: the gate reads something the condition does not name", g.Family, g.Condition)
		}
		for _, name := range named {
			without := map[string]string{}
			for k, v := range open {
				if k != name {
					without[k] = v
				}
			}
			if servedFamilies(t, without)[g.Family] {
				t.Errorf("the %s family is served with %s at its default, though its stated condition needs it", g.Family, name)
			}
		}
	}
}

// servedFamilies lists the families that have a tool in the catalog under
// env.
func servedFamilies(t *testing.T, env map[string]string) map[catalog.Family]bool {
	t.Helper()
	out := map[catalog.Family]bool{}
	for _, tool := range catalogUnder(t, env).Tools {
		out[catalog.Family(tool.Family)] = true
	}
	return out
}

// TestEnvExampleLoadsAsTheDefaults copies .env.example to a .env with every
// assignment uncommented and loads it through the configuration adapter:
// every value must parse, and the result must be the defaults, so the
// example documents what the server uses when nothing is set.
func TestEnvExampleLoadsAsTheDefaults(t *testing.T) {
	example, err := os.ReadFile(filepath.Join(repoRoot, refdocs.EnvExamplePath))
	if err != nil {
		t.Fatal(err)
	}
	var env strings.Builder
	assignments := 0
	for _, line := range strings.Split(string(example), "\n") {
		if a, ok := strings.CutPrefix(line, "# ARROWHEAD_"); ok && strings.Contains(a, "=") {
			env.WriteString("ARROWHEAD_" + a + "\n")
			assignments++
		}
	}
	if want := len(settings.Names()); assignments != want {
		t.Fatalf(".env.example assigns %d variables; the table has %d", assignments, want)
	}
	path := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(path, []byte(env.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := config.Load(config.Options{EnvFile: path, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("the uncommented .env.example does not load: %v", err)
	}
	got, want := s.Effective(), settings.Defaults().Effective()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: .env.example gives %q, the default is %q", want[i].Name, got[i].Value, want[i].Value)
		}
	}
}
