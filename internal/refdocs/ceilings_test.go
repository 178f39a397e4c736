package refdocs

import (
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// TestCeilingRowsFollowTheDefinitions: the rows take their defaults and
// meanings from the definitions, keep the table's order, and place a new
// variable after its family's rows.
func TestCeilingRowsFollowTheDefinitions(t *testing.T) {
	current := settings.ToolCeilings()
	if len(current) < 2 {
		t.Fatalf("only %d generated ceiling rows", len(current))
	}
	first, second := current[0], current[1]
	declared := []wire.DeclaredCeiling{
		// Declared out of table order, with a changed default and an
		// About, plus a new tool of the first row's family.
		{Tool: "second_tool", Family: catalog.FamilyDocs, Ceiling: catalog.Ceiling{Var: second.Var, Default: 7, About: "Said here."}},
		{Tool: "brand_new", Family: catalog.FamilyCore, Ceiling: catalog.Ceiling{Var: "ARROWHEAD_BRAND_NEW_PER_MINUTE", Default: 3}},
		{Tool: "first_tool", Family: catalog.FamilyCore, Ceiling: catalog.Ceiling{Var: first.Var, Default: first.Default + 1}},
		// Two tools sharing one variable agree: one row.
		{Tool: "first_tool", Family: catalog.FamilyCore, Ceiling: catalog.Ceiling{Var: first.Var, Default: first.Default + 1}},
	}
	rows, err := ceilingRows(declared)
	if err != nil {
		t.Fatal(err)
	}
	want := []settings.ToolCeiling{
		{Var: first.Var, Default: first.Default + 1, Meaning: "Calls per caller per minute to first_tool."},
		{Var: "ARROWHEAD_BRAND_NEW_PER_MINUTE", Default: 3, Meaning: "Calls per caller per minute to brand_new."},
		{Var: second.Var, Default: 7, Meaning: "Said here."},
	}
	if !slices.Equal(rows, want) {
		t.Fatalf("rows\n%v\nwant\n%v", rows, want)
	}

	declared = append(declared, wire.DeclaredCeiling{Tool: "other", Family: catalog.FamilyCore, Ceiling: catalog.Ceiling{Var: first.Var, Default: 99}})
	if _, err := ceilingRows(declared); err == nil {
		t.Fatal("two tools giving one variable different defaults were accepted")
	}

	src, err := renderCeilings(want)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), settings.CeilingsPath, src, parser.ParseComments)
	if err != nil {
		t.Fatalf("the generated file does not parse: %v", err)
	}
	if !strings.HasPrefix(string(src), "// Code generated ") || !strings.Contains(f.Comments[0].Text(), "DO NOT EDIT.") {
		t.Errorf("the generated file does not say it is generated:\n%s", src)
	}
	if !strings.Contains(string(src), `{Var: "ARROWHEAD_BRAND_NEW_PER_MINUTE", Default: 3, Meaning: "Calls per caller per minute to brand_new."}`) {
		t.Errorf("a row is missing from\n%s", src)
	}
}
