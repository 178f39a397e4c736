// Package catalog defines the component contract: tools defined once from Go
// types (the input struct is the advertised schema, the validator and the
// decoded value; the output struct is the output schema), resource and
// prompt specifications, the call and result values handlers exchange, and
// the caller-safe ToolError. It knows nothing of any transport; the MCP
// adapter, the CLI listing, the integrity digest and the surface snapshots
// are all generated from these specs.
package catalog

import (
	"context"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Family groups tools; profiles select families.
type Family string

// The ten families.
const (
	FamilyCore    Family = "core"
	FamilyDocs    Family = "docs"
	FamilyData    Family = "data"
	FamilyRepo    Family = "repo"
	FamilyAssist  Family = "assist"
	FamilyExec    Family = "exec"
	FamilyContext Family = "context"
	FamilyTasks   Family = "tasks"
	FamilyMemory  Family = "memory"
	FamilyNotify  Family = "notify"
)

// Families lists every family in a stable order.
var Families = []Family{FamilyCore, FamilyDocs, FamilyData, FamilyRepo, FamilyAssist,
	FamilyExec, FamilyContext, FamilyTasks, FamilyMemory, FamilyNotify}

// Profiles maps ARROWHEAD_PROFILE values to the families they serve.
var Profiles = map[string][]Family{
	"core":   {FamilyCore},
	"docs":   {FamilyCore, FamilyData, FamilyDocs, FamilyMemory, FamilyNotify, FamilyTasks},
	"coding": {FamilyAssist, FamilyContext, FamilyCore, FamilyData, FamilyExec, FamilyRepo},
	"full":   Families,
}

// Ceiling is a per-caller, per-minute rate ceiling: the configuration variable
// that overrides it and its default. This is the only place the default is
// written: the settings table's row for Var is generated from it (see
// core/settings/ceilings.go).
type Ceiling struct {
	Var     string
	Default int
	// About is what the configuration reference says of Var; empty says
	// "Calls per caller per minute to <tool>.".
	About string
}

// Annotations are the behaviour hints a client sees.
type Annotations struct {
	Title       string
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
}

// Hints renders the annotations as the short list used in listings.
func (a Annotations) Hints() []string {
	var h []string
	for i, on := range []bool{a.ReadOnly, a.Destructive, a.Idempotent, a.OpenWorld} {
		if on {
			h = append(h, [...]string{"read-only", "destructive", "idempotent", "open-world"}[i])
		}
	}
	return h
}

// ResourceContent is one piece of a resource read.
type ResourceContent struct {
	URI      string
	MimeType string
	Text     string
}

// ResourceCall is one resource read after admission.
type ResourceCall struct {
	Principal ports.Principal
	URI       string
	// Vars holds template variables for a template read.
	Vars map[string]string
}

// ResourceHandler serves a resource read.
type ResourceHandler func(ctx context.Context, call ResourceCall) ([]ResourceContent, error)

// ResourceSpec declares a static resource (URI) or a template (Template).
// The name doubles as the kill-switch name; the URI or template also works.
type ResourceSpec struct {
	Name        string
	URI         string
	Template    string
	Description string
	MimeType    string
	// Scope is the scope a caller must hold; "" admits any authenticated
	// caller.
	Scope string
	// Match extracts template variables from a concrete URI; it returns
	// false when uri does not belong to the template.
	Match   func(uri string) (map[string]string, bool)
	Handler ResourceHandler
	// Complete serves argument completion for the template variables.
	Complete CompletionHandler
}

// PromptArg is one prompt argument.
type PromptArg struct {
	Name        string
	Description string
	Required    bool
	MaxLength   int
}

// PromptMessage is one rendered prompt message.
type PromptMessage struct {
	Role string
	Text string
	// ResourceURI, when set, embeds a resource link instead of text.
	ResourceURI string
}

// PromptResult is a rendered prompt.
type PromptResult struct {
	Description string
	Messages    []PromptMessage
}

// PromptCall is one prompt render after admission.
type PromptCall struct {
	Principal ports.Principal
	Args      map[string]string
}

// PromptHandler renders a prompt.
type PromptHandler func(ctx context.Context, call PromptCall) (PromptResult, error)

// PromptSpec declares a prompt.
type PromptSpec struct {
	Name        string
	Description string
	Scope       string
	Args        []PromptArg
	Handler     PromptHandler
	Complete    CompletionHandler
}

// CompletionCall asks for candidate values of one argument.
type CompletionCall struct {
	Principal ports.Principal
	Argument  string
	Value     string
	// Context holds already-resolved arguments.
	Context map[string]string
}

// MaxCompletionValues bounds every completion answer.
const MaxCompletionValues = 100

// Completion is a completion answer.
type Completion struct {
	Values  []string
	Total   int
	HasMore bool
}

// CompletionHandler serves argument completion.
type CompletionHandler func(ctx context.Context, call CompletionCall) (Completion, error)

// Arg returns the declared argument named name, or nil.
func (p PromptSpec) Arg(name string) *PromptArg {
	for i := range p.Args {
		if p.Args[i].Name == name {
			return &p.Args[i]
		}
	}
	return nil
}
