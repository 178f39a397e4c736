package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func validDef() ToolDef {
	return ToolDef{
		Name: "sample", Family: FamilyCore, Scope: "tools:read",
		Ceiling:     Ceiling{Var: "ARROWHEAD_SAMPLE_PER_MINUTE", Default: 10},
		Description: "Sample. Example: sample()",
		Input:       Object(map[string]*Schema{}),
		Output:      Object(map[string]*Schema{}),
		Handler:     func(context.Context, Call) (Result, error) { return Result{}, nil },
	}
}

func TestNewToolRefusesIncompleteSpecs(t *testing.T) {
	muts := map[string]func(*ToolDef){
		"no family":     func(d *ToolDef) { d.Family = "" },
		"bad family":    func(d *ToolDef) { d.Family = "misc" },
		"no scope":      func(d *ToolDef) { d.Scope = "" },
		"bad scope":     func(d *ToolDef) { d.Scope = "admin" },
		"no ceiling":    func(d *ToolDef) { d.Ceiling = Ceiling{} },
		"zero ceiling":  func(d *ToolDef) { d.Ceiling.Default = 0 },
		"bad var":       func(d *ToolDef) { d.Ceiling.Var = "SAMPLE" },
		"no example":    func(d *ToolDef) { d.Description = "Sample." },
		"no input":      func(d *ToolDef) { d.Input = nil },
		"string output": func(d *ToolDef) { d.Output = String("x", 1) },
		"no handler":    func(d *ToolDef) { d.Handler = nil },
		"bad name":      func(d *ToolDef) { d.Name = "Sample-Tool" },
	}
	for name, mut := range muts {
		d := validDef()
		mut(&d)
		if _, err := NewTool(d); !errors.Is(err, ErrIncompleteSpec) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if _, err := NewTool(validDef()); err != nil {
		t.Fatal(err)
	}
}

func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSchemaValidate(t *testing.T) {
	s := Object(map[string]*Schema{
		"name":  String("n", 5),
		"k":     Integer("k", 1, 10),
		"x":     Number("x"),
		"flag":  Boolean("f"),
		"mode":  Enum("m", "a", "b"),
		"items": Array("i", String("s", 3), 2),
		"meta":  {Type: "object", AllowAdditional: true},
		"nest":  Object(map[string]*Schema{"inner": String("i", 0)}, "inner"),
	}, "name")
	ok := []string{
		`{"name":"abc"}`,
		`{"name":"héllo","k":3,"x":1.5,"flag":true,"mode":"a","items":["a","b"],"meta":{"z":1},"nest":{"inner":"q"}}`,
	}
	for _, in := range ok {
		if err := s.Validate(decode(t, in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
	bad := map[string]string{
		`{}`:                                 "argument 'name' is required",
		`{"name":5}`:                         "argument 'name' must be a string",
		`{"name":"toolong"}`:                 "argument 'name' must be at most 5 characters",
		`{"name":"a","k":11}`:                "argument 'k' must be at most 10",
		`{"name":"a","k":1.5}`:               "argument 'k' must be an integer",
		`{"name":"a","flag":"yes"}`:          "argument 'flag' must be a boolean",
		`{"name":"a","mode":"c"}`:            "argument 'mode' must be one of the allowed values",
		`{"name":"a","items":["a","b","c"]}`: "argument 'items' must have at most 2 items",
		`{"name":"a","items":["abcd"]}`:      "argument 'items'[0] must be at most 3 characters",
		`{"name":"a","evil_key":1}`:          "arguments has an unexpected property",
		`{"name":"a","nest":{}}`:             "argument 'nest'.inner is required",
		`[]`:                                 "arguments must be an object",
	}
	for in, want := range bad {
		err := s.Validate(decode(t, in))
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "evil_key") {
			t.Errorf("%s: echoed a caller key", in)
		}
	}
}

func TestSchemaMarshal(t *testing.T) {
	b, err := json.Marshal(Object(map[string]*Schema{"q": String("Query.", 10)}, "q"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{"q":{"description":"Query.","maxLength":10,"type":"string"}},"required":["q"],"type":"object"}`
	if string(b) != want {
		t.Fatalf("got %s", b)
	}
}
