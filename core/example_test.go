package core_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
)

// Glossary is the example family's one port: what the embedder's own
// adapter (mapGlossary below) implements.
type Glossary interface {
	Define(ctx context.Context, term string) (string, bool)
}

// glossaryPorts are the ports the family is bound to.
type glossaryPorts struct{ Glossary Glossary }

// defineInput and defineOutput are define_term's schema, validator and
// decoded values.
type defineInput struct {
	Term string `json:"term" description:"The term to define." minLength:"1" maxLength:"64"`
}

type defineOutput struct {
	Term       string `json:"term" description:"The term, lower-cased."`
	Definition string `json:"definition" description:"Its definition; empty when the glossary has none."`
	Found      bool   `json:"found" description:"True when the glossary defines the term."`
}

// defineTerm is the tool's definition, its per-minute ceiling included.
var defineTerm = catalog.Define[defineInput, defineOutput](catalog.ToolDef{
	Name:        "define_term",
	Family:      catalog.FamilyCore,
	Scope:       "glossary:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_DEFINE_TERM_PER_MINUTE", Default: 60},
	Description: "Look a term up in the glossary. Example: define_term(term=\"mcp\").",
	Annotations: catalog.Annotations{Title: "Define a term", ReadOnly: true, Idempotent: true},
})

// glossaryServer is what the family's handlers share.
type glossaryServer struct{ glossary Glossary }

func (g glossaryServer) define(ctx context.Context, _ catalog.Call, in defineInput) (*catalog.Reply[defineOutput], error) {
	term := strings.ToLower(in.Term)
	def, ok := g.glossary.Define(ctx, term)
	return catalog.Answer(defineOutput{Term: term, Definition: def, Found: ok}, term+": "+def), nil
}

// glossaryFamily lists its one tool once: listing and serving read the
// same list.
var glossaryFamily = core.Family[struct{}, glossaryPorts, glossaryServer]{
	ID:    catalog.FamilyCore,
	Serve: func(_ struct{}, p glossaryPorts) glossaryServer { return glossaryServer{glossary: p.Glossary} },
	Tools: []core.FamilyTool[glossaryServer]{
		core.Tool(defineTerm, glossaryServer.define),
	},
}

// mapGlossary is the embedder's adapter for the Glossary port.
type mapGlossary map[string]string

func (m mapGlossary) Define(_ context.Context, term string) (string, bool) {
	def, ok := m[term]
	return def, ok
}

// Example embeds the guarded core with the embedder's own family and
// adapter, and the no-op telemetry, audit and rate ports: every call runs
// the same guard chain (scope, kill switch, validation, redaction) as a
// request over stdio or HTTP, without adapters/wire or any of its stores.
func Example() {
	ctx := context.Background()
	env := map[string]string{
		"ARROWHEAD_PROFILE": "core",
		// The exfiltration guard needs a rate store that keeps flow marks
		// (ports.FlowStore), which nop.Unlimited does not; this family
		// has no open-world tool for it to watch.
		"ARROWHEAD_EGRESS_GUARD": "off",
	}
	s, err := settings.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		fmt.Println(err)
		return
	}
	app, err := core.New(core.Deps{
		Settings:   s,
		Authorizer: authz.AllowAll{},
		Rates:      nop.Unlimited{},
		Audit:      nop.AuditSink{},
		Tracer:     nop.Tracer{},
		Metrics:    nop.Metrics{},
		Clock:      ports.SystemClock{},
		Families: []core.Member{glossaryFamily.With(glossaryPorts{
			Glossary: mapGlossary{"mcp": "Model Context Protocol"},
		})},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	caller := ports.NewPrincipal("service:docs", "glossary:read")
	res, err := app.Call(ctx, caller, "define_term", defineInput{Term: "MCP"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The structured result decodes into the tool's output type.
	var out defineOutput
	if err := res.Decode(&out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s = %s (found: %v)\n", out.Term, out.Definition, out.Found)

	// Arguments are validated against the input type's schema.
	_, err = app.Call(ctx, caller, "define_term", map[string]any{"word": "mcp"})
	te, _ := catalog.AsToolError(err)
	fmt.Println(te.Kind, te.Message)

	// A caller without the scope is told the tool does not exist.
	_, err = app.Call(ctx, ports.NewPrincipal("service:etl", "tools:read"), "define_term", defineInput{Term: "mcp"})
	te, _ = catalog.AsToolError(err)
	fmt.Println(te.Kind, te.Message)
	// Output:
	// mcp = Model Context Protocol (found: true)
	// validation Argument 'term' is required.
	// unknown Unknown tool.
}
