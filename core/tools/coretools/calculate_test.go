package coretools_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/coretools"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// served is one tool of the core family, served by an App: tests call it
// through the guard chain, as every caller does.
type served struct {
	catalog.ToolSpec
	app *core.App
}

// tool returns the named tool of the core family bound to p; the ports p
// leaves nil are doubles that serve nothing.
func tool(t *testing.T, s *settings.Settings, p coretools.Ports, name string) served {
	t.Helper()
	if p.Egress == nil {
		p.Egress = &portstest.Egress{}
	}
	if p.Sandbox == nil {
		p.Sandbox = &portstest.FileJail{}
	}
	app, err := core.New(coretest.Deps(s, portstest.AllowAll{}, coretools.Family.With(p)))
	if err != nil {
		t.Fatal(err)
	}
	for _, bound := range app.Tools() {
		if bound.Spec.Name() == name {
			return served{bound.Spec, app}
		}
	}
	t.Fatalf("no tool %s", name)
	return served{}
}

// invoke calls spec as the local operator with args, a JSON object.
func invoke(t *testing.T, spec served, args string) (catalog.Result, error) {
	t.Helper()
	return spec.app.Call(t.Context(), ports.Operator(), spec.Name(), args)
}

func TestCalculate(t *testing.T) {
	spec := tool(t, settings.Defaults(), coretools.Ports{}, "calculate")
	res, err := invoke(t, spec, `{"expression":"2 * (3 + 4)"}`)
	if err != nil || res.Text != "14" || res.Structured()["result"] != float64(14) {
		t.Fatalf("got %+v, %v", res, err)
	}
	if err := spec.Output().Validate(jsonRoundTrip(t, res.Structured())); err != nil {
		t.Fatalf("output does not match its schema: %v", err)
	}
	for expr, want := range map[string]string{
		"1/0":                          "Division by zero.",
		"__import__('os').system('x')": "The expression may contain only digits, + - * / ( ) . and spaces.",
		"2 ** 8":                       "The expression is not valid arithmetic: numbers joined by + - * / with parentheses (no powers or functions).",
	} {
		_, err := invoke(t, spec, `{"expression":`+quote(expr)+`}`)
		te, ok := catalog.AsToolError(err)
		if !ok || te.Kind != catalog.KindValidation || te.Message != want {
			t.Errorf("%q: %v", expr, err)
		}
	}
	if _, err := invoke(t, spec, `{"expression":"`+strings.Repeat("1", 201)+`"}`); err == nil {
		t.Error("an expression over the length cap was accepted")
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func jsonRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReadFile(t *testing.T) {
	jail := &portstest.FileJail{Data: []byte("line one\n\x1b[31mred\x1b[0m \u202eevil\n")}
	spec := tool(t, settings.Defaults(), coretools.Ports{Sandbox: jail}, "read_file")
	res, err := invoke(t, spec, `{"path":"./notes//a.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	if jail.LastPath() != "notes/a.txt" {
		t.Fatalf("the jail got %q", jail.LastPath())
	}
	content := res.Structured()["content"].(string)
	if strings.ContainsAny(content, "\x1b\u202e") || !strings.Contains(content, "red evil") {
		t.Fatalf("not sanitized: %q", content)
	}
	marker := res.Structured()["marker"].(string)
	if strings.Count(content, marker) != 2 || res.Text != content {
		t.Fatal("content is not framed with the marker")
	}
	if err := spec.Output().Validate(jsonRoundTrip(t, res.Structured())); err != nil {
		t.Fatalf("output does not match its schema: %v", err)
	}

	for path, want := range map[string]catalog.RefusalKind{
		"../etc/passwd": catalog.KindValidation,
		"/etc/passwd":   catalog.KindValidation,
	} {
		_, err := invoke(t, spec, `{"path":`+quote(path)+`}`)
		te, _ := catalog.AsToolError(err)
		if te == nil || te.Kind != want || strings.Contains(te.Message, "passwd") {
			t.Errorf("%q: %v", path, err)
		}
	}
	for jerr, want := range map[error]catalog.RefusalKind{
		ports.ErrNotFound:    catalog.KindNotFound,
		ports.ErrOutsideJail: catalog.KindValidation,
		ports.ErrTooLarge:    catalog.KindValidation,
	} {
		spec := tool(t, settings.Defaults(), coretools.Ports{Sandbox: &portstest.FileJail{Err: jerr}}, "read_file")
		_, err := invoke(t, spec, `{"path":"secret-name.txt"}`)
		te, _ := catalog.AsToolError(err)
		if te == nil || te.Kind != want || strings.Contains(te.Message, "secret-name") {
			t.Errorf("%v: %v", jerr, err)
		}
	}
	other := errors.New("disk on fire at /var/secret")
	_, err = invoke(t, tool(t, settings.Defaults(), coretools.Ports{Sandbox: &portstest.FileJail{Err: other}}, "read_file"), `{"path":"a.txt"}`)
	if te, _ := catalog.AsToolError(err); te == nil || te.Kind != catalog.KindInternal || te.Message != catalog.MsgInternal {
		t.Fatalf("an unexpected jail error must reach the boundary to be masked, not be passed as a deliberate refusal: %v", err)
	}
}
