package wire

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/inproc"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
)

// Listing is the client-visible catalog under a configuration: what
// `arrowhead list-tools --json` prints and the golden fixture pins.
type Listing struct {
	Tools     []ListedTool     `json:"tools"`
	Resources []ListedResource `json:"resources"`
	Prompts   []ListedPrompt   `json:"prompts"`
	// Integrity is the digest arrowhead://integrity serves.
	Integrity string `json:"integrity"`
}

// ListedTool is one tool as a client sees it, plus its scope and ceiling.
type ListedTool struct {
	Name      string `json:"name"`
	Family    string `json:"family"`
	Scope     string `json:"scope"`
	PerMinute int    `json:"per_minute"`
	// PerMinuteVar is the variable that overrides PerMinute.
	PerMinuteVar string         `json:"per_minute_var"`
	Hints        []string       `json:"hints"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"inputSchema"`
	OutputSchema map[string]any `json:"outputSchema"`
	Annotations  map[string]any `json:"annotations"`
	Disabled     bool           `json:"disabled,omitempty"`
}

// ListedResource is a resource or resource template.
type ListedResource struct {
	Name        string `json:"name"`
	URI         string `json:"uri,omitempty"`
	URITemplate string `json:"uriTemplate,omitempty"`
	Description string `json:"description"`
	MimeType    string `json:"mimeType,omitempty"`
	Scope       string `json:"scope"`
	// Completion says the template's variables answer completion/complete.
	Completion bool `json:"completion,omitempty"`
}

// ListedPrompt is a prompt and its arguments.
type ListedPrompt struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	Scope       string           `json:"scope"`
	Arguments   []ListedArgument `json:"arguments"`
	// Completion says the arguments answer completion/complete.
	Completion bool `json:"completion,omitempty"`
}

// ListedArgument is one prompt argument as a client sees it.
type ListedArgument struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
}

// FamilyGate is a family as composed here, and the gate that must also be
// open for it to be served.
type FamilyGate struct {
	Family catalog.Family
	// Gated says the family has a gate; Condition states it (GateDoc).
	Gated     bool
	Condition string
}

// EveryFamilyEnv is an environment that serves every family: the full
// profile with every gate open. The reference documentation and the surface
// snapshots list the catalog under it; a conformance test proves it opens
// every gate Gates reports.
func EveryFamilyEnv() map[string]string {
	return map[string]string{
		"ARROWHEAD_PROFILE":          "full",
		"ARROWHEAD_EXEC_ENABLED":     "true",
		"ARROWHEAD_NOTIFY_ALLOWLIST": "https://hooks.example.com/notify",
	}
}

// Gates lists every family the server composes, in composition order, with
// its gate. It opens nothing.
func Gates() []FamilyGate {
	members := families(settings.Defaults(), familyPorts{})
	out := make([]FamilyGate, len(members))
	for i, m := range members {
		id, doc, gated := core.GateOf(m)
		out[i] = FamilyGate{Family: id, Gated: gated, Condition: doc}
	}
	return out
}

// Catalog builds the catalog for s without opening any jail, database or
// network client: every family is declared, not bound.
func Catalog(ctx context.Context, s *settings.Settings) (Listing, error) {
	app, err := declaredApp(s)
	if err != nil {
		return Listing{}, err
	}
	return ListingOf(app), nil
}

// DeclaredCeiling is one tool's per-minute ceiling as its definition
// states it.
type DeclaredCeiling struct {
	Tool    string
	Family  catalog.Family
	Ceiling catalog.Ceiling
}

// Ceilings lists the ceiling of every tool declared under s, by tool name,
// opening nothing: what the settings table's tool rows are generated from.
func Ceilings(ctx context.Context, s *settings.Settings) ([]DeclaredCeiling, error) {
	app, err := declaredApp(s)
	if err != nil {
		return nil, err
	}
	var out []DeclaredCeiling
	for _, t := range app.Tools() {
		out = append(out, DeclaredCeiling{Tool: t.Spec.Name(), Family: t.Spec.Family(), Ceiling: t.Spec.Ceiling()})
	}
	return out, nil
}

// declaredApp is the application of s with every family declared, not
// bound: it lists and serves nothing else.
func declaredApp(s *settings.Settings) (*core.App, error) {
	return core.New(core.Deps{
		Settings:   s,
		Authorizer: authz.AllowAll{},
		Rates:      inproc.NewRateStore(ports.SystemClock{}),
		Audit:      nop.AuditSink{},
		Tracer:     nop.Tracer{},
		Metrics:    nop.Metrics{},
		Clock:      ports.SystemClock{},
		Signer:     declaredSigner(),
		Version:    Version,
		Families:   core.Declared(families(s, familyPorts{})),
	})
}

// ListingOf renders an application's catalog.
func ListingOf(app *core.App) Listing {
	var l Listing
	op := ports.Operator()
	for _, t := range app.Tools() {
		surface := core.ToolSurface(t.Spec)
		hints := t.Spec.Annotations().Hints()
		if hints == nil {
			hints = []string{}
		}
		l.Tools = append(l.Tools, ListedTool{
			Name:         t.Spec.Name(),
			Family:       string(t.Spec.Family()),
			Scope:        t.Spec.Scope(),
			PerMinute:    t.PerMinute,
			PerMinuteVar: t.Spec.Ceiling().Var,
			Hints:        hints,
			Description:  t.Spec.Description(),
			InputSchema:  schemaMap(t.Spec.Input()),
			OutputSchema: schemaMap(t.Spec.Output()),
			Annotations:  surface["annotations"].(map[string]any),
			Disabled:     !app.Visible(op, ports.ComponentTool, t.Spec.Name()),
		})
	}
	for _, r := range app.Resources() {
		l.Resources = append(l.Resources, ListedResource{
			Name: r.Name, URI: r.URI, URITemplate: r.Template,
			Description: r.Description, MimeType: r.MimeType, Scope: r.Scope, Completion: r.Complete != nil,
		})
	}
	for _, p := range app.Prompts() {
		args := make([]ListedArgument, 0, len(p.Args))
		for _, a := range p.Args {
			args = append(args, ListedArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		l.Prompts = append(l.Prompts, ListedPrompt{Name: p.Name, Description: p.Description, Scope: p.Scope, Arguments: args,
			Completion: p.Complete != nil})
	}
	if l.Tools == nil {
		l.Tools = []ListedTool{}
	}
	if l.Resources == nil {
		l.Resources = []ListedResource{}
	}
	if l.Prompts == nil {
		l.Prompts = []ListedPrompt{}
	}
	l.Integrity, _ = app.Integrity()
	return l
}

// schemaMap is a schema's one rendering read back as a generic object, for
// the listing's readers (reference docs) that walk its keywords.
func schemaMap(s *catalog.Schema) map[string]any {
	b, err := s.MarshalJSON()
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		// Our own schemas always render; an error here is a programming bug.
		panic(fmt.Sprintf("listing: %v", err))
	}
	return m
}
