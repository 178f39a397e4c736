package conformance_test

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/settings"
)

// seedVariable is one row of the seed's configuration reference.
type seedVariable struct {
	def, heading string
	row          int // its position in the seed's reference
}

// seedConfig reads testdata/seed_config.tsv: each variable of the seed's
// configuration reference with its default and its section's heading.
func seedConfig(t *testing.T) map[string]seedVariable {
	t.Helper()
	f, err := os.Open("testdata/seed_config.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seed := map[string]seedVariable{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 3 {
			t.Fatalf("seed_config.tsv: %q has %d columns, want 3", line, len(fields))
		}
		seed[fields[0]] = seedVariable{def: fields[1], heading: fields[2], row: len(seed)}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return seed
}

// TestEveryVariableFromTheSeed checks that each variable in the seed's
// configuration reference exists here with the same default, and that we
// define nothing the seed does not.
func TestEveryVariableFromTheSeed(t *testing.T) {
	seed := seedConfig(t)
	if len(seed) < 180 {
		t.Fatalf("seed table has only %d variables", len(seed))
	}
	for name, want := range seed {
		got, ok := settings.DefaultOf(name)
		if !ok {
			t.Errorf("%s is in the seed but not defined", name)
			continue
		}
		if got != want.def {
			t.Errorf("%s default = %q, seed says %q", name, got, want.def)
		}
	}
	generated := generatedCeilings()
	for _, name := range settings.Names() {
		if _, ok := seed[name]; !ok && !generated[name] && !slices.Contains(settings.Extensions, name) {
			t.Errorf("%s is defined but neither in the seed's reference nor a declared extension", name)
		}
	}
	// Every default must load and be valid on its own.
	_ = settings.Defaults()
}

// TestVariablesSitInTheSeedsSections checks that the configuration
// reference files each seed variable under the section the seed does, and
// that the sections come in the seed's order.
func TestVariablesSitInTheSeedsSections(t *testing.T) {
	seed := seedConfig(t)
	var ours []string // the seed headings, in the order our sections come
	for _, d := range settings.Docs() {
		want, ok := seed[d.Name]
		if !ok {
			if !d.Extension && !generatedCeilings()[d.Name] {
				t.Errorf("%s is not in the seed, so it must be a declared extension", d.Name)
			}
			continue
		}
		if d.Section.Extension || !strings.HasPrefix(want.heading, d.Section.Title) {
			t.Errorf("%s is under %q; the seed has it under %q", d.Name, d.Section.Title, want.heading)
			continue
		}
		if !slices.Contains(ours, want.heading) {
			ours = append(ours, want.heading)
		}
	}
	rows := make([]seedVariable, 0, len(seed))
	for _, v := range seed {
		rows = append(rows, v)
	}
	slices.SortFunc(rows, func(a, b seedVariable) int { return a.row - b.row })
	var theirs []string
	for _, v := range rows {
		if !slices.Contains(theirs, v.heading) {
			theirs = append(theirs, v.heading)
		}
	}
	if !slices.Equal(ours, theirs) {
		t.Errorf("the sections come in the order\n%q\nthe seed orders them\n%q", ours, theirs)
	}
}

// generatedCeilings are the tools' own ceilings: each is declared by its
// tool's definition and its row generated from there
// (core/settings/ceilings.go), so a new tool adds no extension by hand.
func generatedCeilings() map[string]bool {
	out := map[string]bool{}
	for _, c := range settings.ToolCeilings() {
		out[c.Var] = true
	}
	return out
}
