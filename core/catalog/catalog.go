// Package catalog defines the component contract: tool, resource and prompt
// specifications, the argument schema they advertise and enforce, the call
// and result values handlers exchange, and the caller-safe ToolError. It knows
// nothing of any transport; the MCP adapter, the CLI listing, the integrity
// digest and the golden fixture are all generated from these specs.
package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

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
// that overrides it and its default.
type Ceiling struct {
	Var     string
	Default int
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
	if a.ReadOnly {
		h = append(h, "read-only")
	}
	if a.Destructive {
		h = append(h, "destructive")
	}
	if a.Idempotent {
		h = append(h, "idempotent")
	}
	if a.OpenWorld {
		h = append(h, "open-world")
	}
	return h
}

// ClientCaps are what the calling client can do beyond plain calls.
type ClientCaps struct {
	// Elicitation is true when the client can answer an input request.
	Elicitation bool
}

// InputRequest asks the client to confirm or supply something before the
// call can complete (elicitation). The handler is called again with the
// answer in Call.Inputs.
type InputRequest struct {
	// ID names the request; the answer comes back under the same id.
	ID string
	// Message is shown to the user.
	Message string
	// Schema is the requested object schema (flat, primitive properties).
	Schema *Schema
	// State is an opaque token echoed back on retry.
	State string
}

// InputAnswer is the client's answer to an InputRequest.
type InputAnswer struct {
	// Action is "accept", "decline" or "cancel".
	Action  string
	Content map[string]any
}

// Call is one invocation of a handler after the guard chain admitted it.
type Call struct {
	Principal ports.Principal
	// Args are the validated arguments (numbers as json.Number).
	Args map[string]any
	// Raw is the arguments object as received.
	Raw json.RawMessage
	// Caps describe the client.
	Caps ClientCaps
	// Inputs carries answers to earlier input requests, keyed by id.
	Inputs map[string]InputAnswer
	// InputState is the opaque state echoed back with Inputs.
	InputState string
	// Progress, when non-nil, reports progress to a client that asked for it.
	Progress func(done, total float64, message string)
}

// Bind decodes the validated arguments into v (a pointer to a struct with
// json tags). Validation already ran, so a failure here is a schema/struct
// mismatch in our code, reported as a validation refusal without values.
func (c Call) Bind(v any) error {
	raw := c.Raw
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return Invalid("arguments do not match the tool's schema")
	}
	return nil
}

// Result is a handler's successful answer: structured content matching the
// tool's output schema plus a text block for clients that read only text.
type Result struct {
	Structured map[string]any
	Text       string
	// NeedInput, when set, asks the client for input before completing.
	NeedInput *InputRequest
}

// Handler runs a tool after the guard chain admitted the call.
type Handler func(ctx context.Context, call Call) (Result, error)

// ToolDef is the literal a family writes to declare a tool; NewTool turns it
// into a ToolSpec after checking it is complete.
type ToolDef struct {
	Name        string
	Family      Family
	Scope       string
	Ceiling     Ceiling
	Description string
	Input       *Schema
	Output      *Schema
	Annotations Annotations
	Handler     Handler
}

// ToolSpec is a complete, immutable tool declaration. Its fields are
// unexported so a spec cannot exist without a family, a scope, a rate
// ceiling, both schemas and a handler.
type ToolSpec struct {
	def ToolDef
}

var (
	namePattern  = regexp.MustCompile(`^[a-z][a-z0-9_]{1,63}$`)
	scopePattern = regexp.MustCompile(`^[a-z]+:[a-z]+$`)
	varPattern   = regexp.MustCompile(`^ARROWHEAD_[A-Z0-9_]+_PER_MINUTE$`)
)

// ErrIncompleteSpec is returned by NewTool for a spec missing a required part.
var ErrIncompleteSpec = errors.New("incomplete tool spec")

// NewTool validates def and returns the spec.
func NewTool(def ToolDef) (ToolSpec, error) {
	fail := func(why string) (ToolSpec, error) {
		return ToolSpec{}, fmt.Errorf("%w: %s: %s", ErrIncompleteSpec, def.Name, why)
	}
	switch {
	case !namePattern.MatchString(def.Name):
		return fail("name must be lower_snake_case")
	case def.Family == "":
		return fail("family is required")
	case !knownFamily(def.Family):
		return fail("unknown family")
	case !scopePattern.MatchString(def.Scope):
		return fail("scope is required (resource:verb)")
	case !varPattern.MatchString(def.Ceiling.Var) || def.Ceiling.Default <= 0:
		return fail("a per-minute ceiling (variable and positive default) is required")
	case strings.TrimSpace(def.Description) == "":
		return fail("description is required")
	case !strings.Contains(def.Description, "Example:"):
		return fail("description needs an Example: line")
	case def.Input == nil || def.Input.Type != "object":
		return fail("input schema must be an object schema")
	case def.Output == nil || def.Output.Type != "object":
		return fail("output schema must be an object schema")
	case def.Handler == nil:
		return fail("handler is required")
	}
	return ToolSpec{def: def}, nil
}

// MustTool is NewTool for package-level declarations; it panics on an
// incomplete spec, which a unit test over the whole inventory catches.
func MustTool(def ToolDef) ToolSpec {
	s, err := NewTool(def)
	if err != nil {
		panic(err)
	}
	return s
}

func knownFamily(f Family) bool {
	for _, k := range Families {
		if k == f {
			return true
		}
	}
	return false
}

// Name returns the tool name.
func (t ToolSpec) Name() string { return t.def.Name }

// Family returns the tool's family.
func (t ToolSpec) Family() Family { return t.def.Family }

// Scope returns the scope a caller must hold.
func (t ToolSpec) Scope() string { return t.def.Scope }

// Ceiling returns the rate ceiling declaration.
func (t ToolSpec) Ceiling() Ceiling { return t.def.Ceiling }

// Description returns the wire description.
func (t ToolSpec) Description() string { return t.def.Description }

// Input returns the input schema.
func (t ToolSpec) Input() *Schema { return t.def.Input }

// Output returns the output schema.
func (t ToolSpec) Output() *Schema { return t.def.Output }

// Annotations returns the behaviour hints.
func (t ToolSpec) Annotations() Annotations { return t.def.Annotations }

// Handler returns the handler. Only the guard chain calls it.
func (t ToolSpec) Handler() Handler { return t.def.Handler }

// IsZero reports whether the spec was never built.
func (t ToolSpec) IsZero() bool { return t.def.Name == "" }

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

// TimeoutFromSeconds converts a float seconds setting into a duration.
func TimeoutFromSeconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second))
}

// Arg returns the declared argument named name, or nil.
func (p PromptSpec) Arg(name string) *PromptArg {
	for i := range p.Args {
		if p.Args[i].Name == name {
			return &p.Args[i]
		}
	}
	return nil
}
