package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

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

// TestInFamily: a family's list gives a tool its family and the family's
// bounds; a tool stating another family, or a bound its family also
// gives, is refused.
func TestInFamily(t *testing.T) {
	type limited struct {
		Q string `json:"q" description:"q" maxLength:"$q"`
	}
	d := validDef()
	d.Family = ""
	spec := Define[limited, sampleOutput](d).In(FamilyDocs, Bounds{"q": 5, "unused": 1}).Spec()
	if err := spec.Check(); err != nil || spec.Family() != FamilyDocs || *spec.Input().Properties["q"].MaxLength != 5 {
		t.Fatalf("listed in docs: %v, family %q", err, spec.Family())
	}
	if err := Define[limited, sampleOutput](validDef()).In(FamilyDocs, Bounds{"q": 5}).Spec().Check(); !errors.Is(err, ErrIncompleteSpec) {
		t.Errorf("a core tool listed in docs: %v", err)
	}
	d.Bounds = Bounds{"q": 3}
	if err := Define[limited, sampleOutput](d).In(FamilyDocs, Bounds{"q": 5}).Spec().Check(); !errors.Is(err, ErrIncompleteSpec) {
		t.Errorf("a bound given by the tool and its family: %v", err)
	}
	if err := Define[limited, sampleOutput](d).In(FamilyDocs, nil).Spec().Check(); err != nil {
		t.Errorf("the tool's own bound: %v", err)
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
		`{"name":"a","mode":"c"}`:            "argument 'mode' must be one of: a, b",
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

	// Every keyword renders as encoding/json renders the same document
	// (sorted keys, its number and string forms), without HTML escaping.
	type everything struct {
		validated
		Ratio float64 `json:"ratio" description:"<a & b>" minimum:"0.5" maximum:"1e21"`
	}
	all, err := SchemaFor[everything](Bounds{"name": 5})
	if err != nil {
		t.Fatal(err)
	}
	got, err := all.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(got, &generic); err != nil {
		t.Fatal(err)
	}
	var viaJSON strings.Builder
	enc := json.NewEncoder(&viaJSON)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(viaJSON.String(), "\n"); string(got) != want {
		t.Fatalf("got     %s\nviaJSON %s", got, want)
	}
	if !strings.Contains(string(got), `"<a & b>"`) {
		t.Errorf("HTML characters escaped: %s", got)
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
	type bytesField struct {
		B []byte `json:"b"`
	}
	type ownJSON struct {
		S *Schema `json:"s"`
	}
	type quotedBound struct {
		N int `json:"n,string" maximum:"3"`
	}
	for name, derive := range map[string]func() (*Schema, error){
		"channel":       func() (*Schema, error) { return SchemaFor[chanField](nil) },
		"missing bound": func() (*Schema, error) { return SchemaFor[badBound](nil) },
		"wrong keyword": func() (*Schema, error) { return SchemaFor[wrongKeyword](nil) },
		"bad pattern":   func() (*Schema, error) { return SchemaFor[badPattern](nil) },
		"duplicate":     func() (*Schema, error) { return SchemaFor[dup](nil) },
		"recursive":     func() (*Schema, error) { return SchemaFor[recursive](nil) },
		"[]byte":        func() (*Schema, error) { return SchemaFor[bytesField](nil) },
		"MarshalJSON":   func() (*Schema, error) { return SchemaFor[ownJSON](nil) },
		"quoted bound":  func() (*Schema, error) { return SchemaFor[quotedBound](nil) },
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
	Small  int8               `json:"small,omitempty"`
	Ratio  float64            `json:"ratio,omitempty"`
	Num    []json.Number      `json:"num,omitempty"`
	Params map[string]any     `json:"params,omitempty"`
	Opt    *string            `json:"opt,omitempty"`
	Sub    *nested            `json:"sub,omitempty"`
	ByName map[string]*nested `json:"by_name,omitempty"`
	Quoted int                `json:"quoted,string,omitempty"`
}

type bindOutput struct {
	Name    string         `json:"name"`
	Count   int64          `json:"count"`
	Score   float64        `json:"score"`
	Empty   []string       `json:"empty"`
	Skipped string         `json:"skipped,omitempty"`
	Any     any            `json:"any"`
	Kind    namedKind      `json:"kind"`
	Nested  nested         `json:"nested"`
	Maybe   *nested        `json:"maybe" nullable:"true"`
	List    []listed       `json:"list"`
	Meta    map[string]int `json:"meta"`
	// omitzero omits a zero struct and a nil slice, never an empty one;
	// omitempty omits an empty slice but never a struct.
	ZeroSt  nested    `json:"zero_st,omitzero"`
	ZeroSl  []string  `json:"zero_sl,omitzero"`
	EmptyZ  []string  `json:"empty_z,omitzero"`
	EmptyE  []string  `json:"empty_e,omitempty"`
	StructE nested    `json:"struct_e,omitempty"`
	Quoted  int       `json:"quoted,string"`
	When    time.Time `json:"when"`
}

type listed struct {
	Inner string   `json:"inner"`
	Tags  []string `json:"tags"`
}

type namedKind string

func TestBindDecodesAndEncodesWithEncodingJSON(t *testing.T) {
	var got bindInput
	when := time.Date(2026, 12, 2, 3, 4, 5, 0, time.UTC)
	tool := Define[bindInput, bindOutput](validDef()).Bind(func(_ context.Context, call Call, in bindInput) (*Reply[bindOutput], error) {
		got = in
		return Answer(bindOutput{Name: in.Name, Count: 3, Score: 2, Any: []any{"x"}, Kind: "k", List: []listed{{Inner: "a"}},
			EmptyZ: []string{}, EmptyE: []string{}, Quoted: 7, When: when}, "text"), nil
	})
	raw := `{"inner":"i","name":"n","k":4,"ratio":0.5,"num":[1.5,2],"params":{"a":1,"b":"x","c":null},"opt":"o","sub":{"inner":"s"},"by_name":{"x":{"inner":"y"}},"quoted":"12"}`
	res, err := invokeRaw(t, tool, raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.Inner != "i" || got.Name != "n" || got.K != 4 || got.Ratio != 0.5 || len(got.Num) != 2 || got.Num[0] != "1.5" ||
		got.Params["a"] != json.Number("1") || got.Params["c"] != nil || *got.Opt != "o" || got.Sub.Inner != "s" ||
		got.ByName["x"].Inner != "y" || got.Quoted != 12 {
		t.Fatalf("decoded %+v", got)
	}
	if res.Text != "text" {
		t.Errorf("text %q", res.Text)
	}
	// encoding/json's own rules, in field order, with a nil slice or map
	// where the schema promises an array or object sent empty.
	want := `{"name":"n","count":3,"score":2,"empty":[],"any":["x"],"kind":"k","nested":{"inner":""},"maybe":null,` +
		`"list":[{"inner":"a","tags":[]}],"meta":{},"empty_z":[],"struct_e":{"inner":""},"quoted":"7","when":"2026-12-02T03:04:05Z"}`
	if string(res.JSON) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", res.JSON, want)
	}
	var typed bindOutput
	if err := res.Decode(&typed); err != nil || typed.Count != 3 || !typed.When.Equal(when) || typed.List[0].Inner != "a" || typed.Quoted != 7 {
		t.Errorf("decoded result %+v %v", typed, err)
	}
	if s := res.Structured(); s["count"] != float64(3) || s["score"] != float64(2) || s["kind"] != "k" || s["any"].([]any)[0] != "x" || s["list"].([]any)[0].(map[string]any)["inner"] != "a" {
		t.Errorf("generic result %#v", s)
	}
	if err := tool.Output().Validate(parse(t, string(res.JSON))); err != nil {
		t.Errorf("encoded output does not match its schema: %v", err)
	}
	if q := tool.Input().Properties["quoted"]; q.Type != "string" {
		t.Errorf("a quoted int is described as %q", q.Type)
	}
	if err := (Result{}).Decode(&typed); !errors.Is(err, ErrNoContent) {
		t.Errorf("an input request decoded: %v", err)
	}

	for in, want := range map[string]string{
		`{"inner":"i","name":1}`:           "Argument 'name' must be a string.",
		`{"inner":"i","name":"n","k":1.0}`: "Argument 'k' must be an integer.",
		`{"inner":"i","name":"n","k":1e2}`: "Argument 'k' must be an integer.",
		// Valid for the schema, beyond what int8 holds: named, not echoed.
		`{"inner":"i","name":"n","small":300}`:      "Argument 'small' is out of range for its type.",
		`{"inner":"i","name":"n","quoted":"seven"}`: "Arguments do not fit the tool's input type.",
	} {
		_, err := invokeRaw(t, tool, in)
		if te, ok := AsToolError(err); !ok || te.Kind != KindValidation || te.Message != want {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
	if _, err := invokeRaw(t, Define[bindInput, bindOutput](validDef()).Spec(), `{"inner":"i","name":"n"}`); !errors.Is(err, ErrNotBound) {
		t.Errorf("an unbound spec ran: %v", err)
	}
	_, err = Define[bindInput, bindOutput](validDef()).NotConfigured("Not configured (ARROWHEAD_X).").Invoke(t.Context(), chain.Admit(), Call{}, nil, map[string]any{"inner": "i", "name": "n"})
	if te, ok := AsToolError(err); !ok || te.Kind != KindUnavailable || te.Message != "Not configured (ARROWHEAD_X)." {
		t.Errorf("not configured: %v", err)
	}
	got = bindInput{}
	if _, err := tool.Invoke(t.Context(), chain.Admitted{}, Call{}, nil, map[string]any{"inner": "i", "name": "n"}); !errors.Is(err, ErrNotAdmitted) || got.Name != "" {
		t.Errorf("a call without the chain's admission ran: %v", err)
	}
}

// invokeRaw runs the spec as the guard chain does: the arguments parsed
// for the validator, their bytes for the decoder.
func invokeRaw(t *testing.T, spec ToolSpec, raw string) (Result, error) {
	t.Helper()
	return spec.Invoke(t.Context(), chain.Admit(), Call{}, json.RawMessage(raw), parse(t, raw).(map[string]any))
}

func TestStringsWalkAndRewrite(t *testing.T) {
	doc := json.RawMessage(`{"a":"x","sha256":["h1","h2"],"n":{"k\u0022":"q\"\n","b":true,"c":null,"d":-1.5e3},"e":[]}`)
	var seen []string
	if err := EachString(doc, func(key, s string) { seen = append(seen, key+"="+s) }); err != nil {
		t.Fatal(err)
	}
	want := []string{"=a", "a=x", "=sha256", "sha256=h1", "sha256=h2", "=n", "=k\"", "k\"=q\"\n", "=b", "=c", "=d", "=e"}
	if !slices.Equal(seen, want) {
		t.Fatalf("seen %q\nwant %q", seen, want)
	}
	out, err := RewriteStrings(doc, func(s string) (string, bool) { return strings.ToUpper(s), s != "x" })
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != `{"a":"x","sha256":["H1","H2"],"n":{"k\u0022":"Q\"\n","b":true,"c":null,"d":-1.5e3},"e":[]}` {
		t.Errorf("rewritten %s", got)
	}
	if same, _ := RewriteStrings(doc, func(s string) (string, bool) { return s, false }); &same[0] != &doc[0] {
		t.Error("an unchanged document was copied")
	}
	for _, bad := range []string{`{"a":"x"`, `{"a" "x"}`, `{"a":"x}`, `{"a":nul}`, `{"a":}`} {
		if err := EachString(json.RawMessage(bad), func(string, string) {}); err == nil {
			t.Errorf("%s: walked", bad)
		}
	}
}
