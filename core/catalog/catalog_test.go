package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/internal/chain"
)

type sampleInput struct{}

type sampleOutput struct {
	OK bool `json:"ok" description:"Always true."`
}

func validDef() ToolDef {
	return ToolDef{
		Name: "sample", Family: FamilyCore, Scope: "tools:read",
		Ceiling:     Ceiling{Var: "ARROWHEAD_SAMPLE_PER_MINUTE", Default: 10},
		Description: "Sample. Example: sample()",
	}
}

func TestCheckRefusesIncompleteSpecs(t *testing.T) {
	muts := map[string]func(*ToolDef){
		"no family":    func(d *ToolDef) { d.Family = "" },
		"bad family":   func(d *ToolDef) { d.Family = "misc" },
		"no scope":     func(d *ToolDef) { d.Scope = "" },
		"bad scope":    func(d *ToolDef) { d.Scope = "admin" },
		"no ceiling":   func(d *ToolDef) { d.Ceiling = Ceiling{} },
		"zero ceiling": func(d *ToolDef) { d.Ceiling.Default = 0 },
		"bad var":      func(d *ToolDef) { d.Ceiling.Var = "SAMPLE" },
		"no example":   func(d *ToolDef) { d.Description = "Sample." },
		"bad name":     func(d *ToolDef) { d.Name = "Sample-Tool" },
		"unused bound": func(d *ToolDef) { d.Bounds = Bounds{"max": 3} },
	}
	for name, mut := range muts {
		d := validDef()
		mut(&d)
		if err := Define[sampleInput, sampleOutput](d).Spec().Check(); !errors.Is(err, ErrIncompleteSpec) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if err := Define[sampleInput, string](validDef()).Spec().Check(); !errors.Is(err, ErrIncompleteSpec) {
		t.Errorf("a string output was accepted: %v", err)
	}
	if err := (ToolSpec{}).Check(); !errors.Is(err, ErrIncompleteSpec) {
		t.Errorf("a zero spec passed: %v", err)
	}
	if err := Define[sampleInput, sampleOutput](validDef()).Spec().Check(); err != nil {
		t.Fatal(err)
	}
}

func parse(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

type nested struct {
	Inner string `json:"inner" description:"i"`
}

type validated struct {
	Name  string         `json:"name" description:"n" maxLength:"$name"`
	K     int            `json:"k,omitempty" description:"k" minimum:"1" maximum:"10"`
	X     float64        `json:"x,omitempty" description:"x"`
	Flag  bool           `json:"flag,omitempty" description:"f"`
	Mode  string         `json:"mode,omitempty" description:"m" enum:"a,b"`
	Code  string         `json:"code,omitempty" description:"c" pattern:"^[A-Z]{2}$"`
	Items []string       `json:"items,omitempty" description:"i" maxItems:"2" items:"description=s;maxLength=3"`
	Meta  map[string]any `json:"meta,omitempty"`
	Nest  *nested        `json:"nest,omitempty"`
	Maybe *string        `json:"maybe,omitempty" nullable:"true"`
}

func TestSchemaValidate(t *testing.T) {
	s, err := SchemaFor[validated](Bounds{"name": 5})
	if err != nil {
		t.Fatal(err)
	}
	ok := []string{
		`{"name":"abc"}`,
		`{"name":"héllo","k":3,"x":1.5,"flag":true,"mode":"a","code":"AB","items":["a","b"],"meta":{"z":1},"nest":{"inner":"q"},"maybe":null}`,
	}
	for _, in := range ok {
		if err := s.Validate(parse(t, in)); err != nil {
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
		`{"name":"a","code":"abc"}`:          "argument 'code' does not match the required pattern",
		`{"name":"a","items":["a","b","c"]}`: "argument 'items' must have at most 2 items",
		`{"name":"a","items":["abcd"]}`:      "argument 'items'[0] must be at most 3 characters",
		`{"name":"a","evil_key":1}`:          "arguments has an unexpected property",
		`{"name":"a","nest":{}}`:             "argument 'nest'.inner is required",
		`{"name":null}`:                      "argument 'name' must be a string",
		`[]`:                                 "arguments must be an object",
	}
	for in, want := range bad {
		err := s.Validate(parse(t, in))
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "evil_key") {
			t.Errorf("%s: echoed a caller key", in)
		}
	}
}

func TestSchemaMarshal(t *testing.T) {
	type query struct {
		Q     string            `json:"q" description:"Query." maxLength:"10"`
		Tags  map[string]string `json:"tags,omitempty" maxProperties:"3" values:"description=A tag."`
		Score *float64          `json:"score,omitempty" nullable:"true"`
	}
	s, err := SchemaFor[query](nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{"q":{"description":"Query.","maxLength":10,"type":"string"},` +
		`"score":{"type":["number","null"]},` +
		`"tags":{"additionalProperties":{"description":"A tag.","type":"string"},"maxProperties":3,"properties":{},"type":"object"}},` +
		`"required":["q"],"type":"object"}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}

	// Every keyword renders as encoding/json renders the schema's map.
	type everything struct {
		validated
		Ratio float64 `json:"ratio" description:"<a & b>" minimum:"0.5" maximum:"1e21"`
	}
	all, err := SchemaFor[everything](Bounds{"name": 5})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	viaMap, err := json.Marshal(all.Map())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(viaMap) {
		t.Fatalf("got    %s\nviaMap %s", got, viaMap)
	}
}

func TestSchemaForRefusesWhatItCannotDescribe(t *testing.T) {
	type chanField struct {
		C chan int `json:"c"`
	}
	type badBound struct {
		S string `json:"s" maxLength:"$missing"`
	}
	type wrongKeyword struct {
		N int `json:"n" maxLength:"3"`
	}
	type badPattern struct {
		S string `json:"s" pattern:"("`
	}
	type dup struct {
		nested
		Inner string `json:"inner"`
	}
	type recursive struct {
		Next *recursive `json:"next,omitempty"`
	}
	for name, derive := range map[string]func() (*Schema, error){
		"channel":       func() (*Schema, error) { return SchemaFor[chanField](nil) },
		"missing bound": func() (*Schema, error) { return SchemaFor[badBound](nil) },
		"wrong keyword": func() (*Schema, error) { return SchemaFor[wrongKeyword](nil) },
		"bad pattern":   func() (*Schema, error) { return SchemaFor[badPattern](nil) },
		"duplicate":     func() (*Schema, error) { return SchemaFor[dup](nil) },
		"recursive":     func() (*Schema, error) { return SchemaFor[recursive](nil) },
		"not a struct":  func() (*Schema, error) { return SchemaFor[[]string](nil) },
	} {
		if _, err := derive(); err == nil {
			t.Errorf("%s: derived", name)
		}
	}
}

type bindInput struct {
	nested
	Name   string             `json:"name"`
	K      int                `json:"k,omitempty"`
	Ratio  float64            `json:"ratio,omitempty"`
	Num    []json.Number      `json:"num,omitempty"`
	Params map[string]any     `json:"params,omitempty"`
	Opt    *string            `json:"opt,omitempty"`
	Sub    *nested            `json:"sub,omitempty"`
	ByName map[string]*nested `json:"by_name,omitempty"`
}

type bindOutput struct {
	Name    string         `json:"name"`
	Count   int64          `json:"count"`
	Empty   []string       `json:"empty"`
	Skipped string         `json:"skipped,omitempty"`
	Any     any            `json:"any"`
	Kind    namedKind      `json:"kind"`
	Nested  nested         `json:"nested"`
	Maybe   *nested        `json:"maybe" nullable:"true"`
	List    []nested       `json:"list"`
	Meta    map[string]int `json:"meta"`
}

type namedKind string

func TestBindDecodesOnceAndRendersOutput(t *testing.T) {
	var got bindInput
	tool := Define[bindInput, bindOutput](validDef()).Bind(func(_ context.Context, call Call, in bindInput) (*Reply[bindOutput], error) {
		got = in
		return Answer(bindOutput{Name: in.Name, Count: 3, Any: []any{"x"}, Kind: "k", List: []nested{{Inner: "a"}}}, "text"), nil
	})
	args := parse(t, `{"inner":"i","name":"n","k":4,"ratio":0.5,"num":[1.5,2],"params":{"a":1,"b":"x","c":null},"opt":"o","sub":{"inner":"s"},"by_name":{"x":{"inner":"y"}}}`)
	res, err := tool.Invoke(t.Context(), chain.Admit(), Call{}, args.(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	if got.Inner != "i" || got.Name != "n" || got.K != 4 || got.Ratio != 0.5 || len(got.Num) != 2 || got.Num[0] != "1.5" ||
		got.Params["a"] != json.Number("1") || got.Params["c"] != nil || *got.Opt != "o" || got.Sub.Inner != "s" || got.ByName["x"].Inner != "y" {
		t.Fatalf("decoded %+v", got)
	}
	s := res.Structured
	if res.Text != "text" || s["name"] != "n" || s["count"] != int64(3) || s["kind"] != "k" || s["maybe"] != nil {
		t.Fatalf("rendered %#v", s)
	}
	if _, ok := s["skipped"]; ok {
		t.Error("an omitempty field was rendered")
	}
	if e, ok := s["empty"].([]any); !ok || len(e) != 0 {
		t.Errorf("a nil slice rendered as %#v, want an empty array", s["empty"])
	}
	if m, ok := s["meta"].(map[string]any); !ok || len(m) != 0 {
		t.Errorf("a nil map rendered as %#v", s["meta"])
	}
	if l := s["list"].([]any); l[0].(map[string]any)["inner"] != "a" {
		t.Errorf("list rendered as %#v", l)
	}
	if err := tool.Output().Validate(parse(t, mustJSON(t, s))); err != nil {
		t.Errorf("rendered output does not match its schema: %v", err)
	}

	_, err = tool.Invoke(t.Context(), chain.Admit(), Call{}, map[string]any{"inner": "i", "name": 1})
	if te, ok := AsToolError(err); !ok || te.Kind != KindValidation || te.Message != "Argument 'name' must be a string." {
		t.Errorf("invalid arguments: %v", err)
	}
	if _, err := Define[bindInput, bindOutput](validDef()).Spec().Invoke(t.Context(), chain.Admit(), Call{}, map[string]any{"inner": "i", "name": "n"}); !errors.Is(err, ErrNotBound) {
		t.Errorf("an unbound spec ran: %v", err)
	}
	_, err = Define[bindInput, bindOutput](validDef()).NotConfigured("Not configured (ARROWHEAD_X).").Invoke(t.Context(), chain.Admit(), Call{}, map[string]any{"inner": "i", "name": "n"})
	if te, ok := AsToolError(err); !ok || te.Kind != KindUnavailable || te.Message != "Not configured (ARROWHEAD_X)." {
		t.Errorf("not configured: %v", err)
	}
	got = bindInput{}
	if _, err := tool.Invoke(t.Context(), chain.Admitted{}, Call{}, map[string]any{"inner": "i", "name": "n"}); !errors.Is(err, ErrNotAdmitted) || got.Name != "" {
		t.Errorf("a call without the chain's admission ran: %v", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
