package conformance_test

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/settings"
)

// TestEveryVariableFromTheSeed checks that each variable in the seed's
// configuration reference exists here with the same default, and that we
// define nothing the seed does not.
func TestEveryVariableFromTheSeed(t *testing.T) {
	f, err := os.Open("testdata/seed_config.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seed := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, def, _ := strings.Cut(line, "\t")
		seed[name] = def
	}
	if len(seed) < 180 {
		t.Fatalf("seed table has only %d variables", len(seed))
	}
	for name, want := range seed {
		got, ok := settings.DefaultOf(name)
		if !ok {
			t.Errorf("%s is in the seed but not defined", name)
			continue
		}
		if got != want {
			t.Errorf("%s default = %q, seed says %q", name, got, want)
		}
	}
	for _, name := range settings.Names() {
		if _, ok := seed[name]; !ok && !slices.Contains(settings.Extensions, name) {
			t.Errorf("%s is defined but neither in the seed's reference nor a declared extension", name)
		}
	}
	// Every default must load and be valid on its own.
	_ = settings.Defaults()
}
