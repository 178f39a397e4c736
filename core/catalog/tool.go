package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/arrowhead-go/arrowhead/core/internal/chain"
	"github.com/arrowhead-go/arrowhead/ports"
)

// ClientCaps are what the calling client can do beyond plain calls.
type ClientCaps struct {
	// Elicitation is true when the client can answer an input request.
	Elicitation bool
	// Sampling is true when the client can answer a sampling request with
	// its own model.
	Sampling bool
}

// SampleRequest asks the client's own model for a completion (MCP
// sampling) instead of a form.
type SampleRequest struct {
	System    string
	Prompt    string
	MaxTokens int
}

// InputRequest asks the client to confirm or supply something before the
// call can complete (elicitation), or, with Sample set, to run its model
// (sampling). The handler is called again with the answer in Call.Inputs.
type InputRequest struct {
	// ID names the request; the answer comes back under the same id.
	ID string
	// Message is shown to the user.
	Message string
	// Schema is the requested object schema (flat, primitive properties),
	// derived with SchemaFor.
	Schema *Schema
	// State is an opaque token echoed back on retry.
	State string
	// Sample, when set, makes this a sampling request: Message and Schema
	// are not used.
	Sample *SampleRequest
}

// InputAnswer is the client's answer to an InputRequest.
type InputAnswer struct {
	// Action is "accept", "decline" or "cancel" for an elicitation.
	Action  string
	Content map[string]any
	// Text is the model's answer to a sampling request.
	Text string
}

// Call is one invocation of a tool after the guard chain admitted it. The
// arguments are not here: the handler receives them decoded into its input
// type.
type Call struct {
	Principal ports.Principal
	// Caps describe the client.
	Caps ClientCaps
	// Inputs carries answers to earlier input requests, keyed by id.
	Inputs map[string]InputAnswer
	// InputState is the opaque state echoed back with Inputs.
	InputState string
	// Progress, when non-nil, reports progress to a client that asked for it.
	Progress func(done, total float64, message string)
}

// Reply is a handler's answer: its output value (the structured content)
// and a text block for clients that read only text, or an input request.
type Reply[Out any] struct {
	Out  Out
	Text string
	// NeedInput, when set, asks the client for input before completing; Out
	// is then ignored.
	NeedInput *InputRequest
}

// Answer is the reply carrying out and its text block.
func Answer[Out any](out Out, text string) *Reply[Out] {
	return &Reply[Out]{Out: out, Text: text}
}

// Ask is the reply asking the client for input first.
func Ask[Out any](req *InputRequest) *Reply[Out] {
	return &Reply[Out]{NeedInput: req}
}

// Handler runs a tool with its decoded, validated input.
type Handler[In, Out any] func(ctx context.Context, call Call, in In) (*Reply[Out], error)

// Result is a tool's answer as the guard chain and the transports see it:
// the output encoded by encoding/json (matching the output schema) plus
// the text block, or an input request.
type Result struct {
	// JSON is the structured content, a JSON object; nil with NeedInput.
	// Decode reads it into a Go value.
	JSON      json.RawMessage
	Text      string
	NeedInput *InputRequest
	// Labels are set by the guard chain, never by a handler.
	Labels FlowLabels
}

// ErrNoContent is returned by Decode for a result without structured
// content (an input request).
var ErrNoContent = errors.New("result has no structured content")

// Decode reads the structured content into v as encoding/json does: v is
// usually a pointer to the tool's output type, so an embedder reads a
// result with the type the tool was defined with.
func (r Result) Decode(v any) error {
	if len(r.JSON) == 0 {
		return ErrNoContent
	}
	return json.Unmarshal(r.JSON, v)
}

// Structured returns the structured content as encoding/json decodes it
// into a generic object (a number is a float64), nil without content.
// Decode into the output type reads it typed.
func (r Result) Structured() map[string]any {
	var m map[string]any
	if r.Decode(&m) != nil {
		return nil
	}
	return m
}

// ToolDef is what a family writes to define a tool, beside its input and
// output types (see Define).
type ToolDef struct {
	Name        string
	Family      Family
	Scope       string
	Ceiling     Ceiling
	Description string
	Annotations Annotations
	// Bounds supplies the "$name" placeholders of the input and output
	// types' tags (limits from settings or Go constants).
	Bounds Bounds
}

// Tool is a tool defined from Go types: In is its arguments object, Out its
// structured result. Both are structs; their schemas are derived from them
// once, on first use.
type Tool[In, Out any] struct {
	spec ToolSpec
}

// Define declares a tool from its definition and its input and output types.
// Nothing is derived or checked until the spec is first used; ToolSpec.Check
// (which core.New runs) reports an incomplete definition or a type that
// cannot be described.
func Define[In, Out any](def ToolDef) Tool[In, Out] {
	return Tool[In, Out]{spec: ToolSpec{def: def, shape: &shape{in: reflect.TypeFor[In](), out: reflect.TypeFor[Out]()}}}
}

// In returns the tool as its family's list serves it: of family f, which
// the definition need not state (stating another is an incomplete spec),
// with f's bounds beside the tool's own ToolDef.Bounds (the limits the
// family reads from its Config). A family's tool need not use all of its
// bounds; a name both give is refused, so one bound has one source.
func (t Tool[In, Out]) In(f Family, bounds Bounds) Tool[In, Out] {
	s := t.spec
	listed := s.def.Family
	if listed == "" {
		s.def.Family = f
	}
	if len(bounds) > 0 || (listed != "" && listed != f) {
		s.shape = &shape{in: s.shape.in, out: s.shape.out, family: bounds, listedIn: f}
	}
	return Tool[In, Out]{spec: s}
}

// Spec is the definition alone, bound to nothing: what a listing, a
// snapshot or the integrity digest reads. Invoking it fails.
func (t Tool[In, Out]) Spec() ToolSpec { return t.spec }

// Bind returns the spec served by h. A call validates the arguments against
// the input schema, decodes their bytes into In with encoding/json, runs h
// and encodes its Out with encoding/json.
func (t Tool[In, Out]) Bind(h Handler[In, Out]) ToolSpec {
	s := t.spec
	name := s.def.Name
	s.run = func(ctx context.Context, call Call, raw json.RawMessage) (Result, error) {
		var in In
		if err := decodeInput(raw, &in, s.shape.input, s.shape.inputAny); err != nil {
			return Result{}, err
		}
		r, err := h(ctx, call, in)
		if err != nil {
			return Result{}, err
		}
		if r == nil {
			return Result{}, fmt.Errorf("tool %s returned no reply", name)
		}
		if r.NeedInput != nil {
			return Result{Text: r.Text, NeedInput: r.NeedInput}, nil
		}
		out, err := encodeOutput(r.Out, s.shape.output)
		if err != nil {
			return Result{}, fmt.Errorf("tool %s: encoding its output: %w", name, err)
		}
		return Result{JSON: out, Text: r.Text}, nil
	}
	return s
}

// NotConfigured returns the spec of a tool whose service this deployment
// does not configure: it is listed as usual and every valid call is refused
// as unavailable with message (which names the variable to set). Families
// choose it in one place, from their optional ports.
func (t Tool[In, Out]) NotConfigured(message string) ToolSpec {
	s := t.spec
	s.run = func(context.Context, Call, json.RawMessage) (Result, error) {
		return Result{}, Unavailable(message)
	}
	return s
}

// ToolSpec is a complete, immutable tool declaration. Its fields are
// unexported so a spec cannot exist without going through Define; Check
// proves it has a family, a scope, a rate ceiling and describable types.
type ToolSpec struct {
	def   ToolDef
	shape *shape
	// run decodes the arguments into the input type and runs the handler.
	run func(ctx context.Context, call Call, raw json.RawMessage) (Result, error)
}

// shape holds a tool's types and the schemas derived from them, once.
type shape struct {
	in, out reflect.Type
	// family are the bounds of the family whose list holds the tool (see
	// In), listedIn that family when it is not the definition's.
	family   Bounds
	listedIn Family
	once     sync.Once
	input    *Schema
	output   *Schema
	// inputAny: the input holds a value typed any (see decodeInput).
	inputAny bool
	err      error
}

// derive checks the definition and derives both schemas, once.
func (s *shape) derive(def ToolDef) error {
	s.once.Do(func() {
		if s.err = checkDef(def, s.listedIn); s.err != nil {
			return
		}
		schemas, err := deriveObjects(def.Bounds, s.family, s.in, s.out)
		if err != nil {
			s.err = fmt.Errorf("%w: %s: %w", ErrIncompleteSpec, def.Name, err)
			return
		}
		s.input, s.output, s.inputAny = schemas[0], schemas[1], holdsAny(schemas[0])
	})
	return s.err
}

var (
	namePattern  = regexp.MustCompile(`^[a-z][a-z0-9_]{1,63}$`)
	scopePattern = regexp.MustCompile(`^[a-z]+:[a-z]+$`)
	varPattern   = regexp.MustCompile(`^ARROWHEAD_[A-Z0-9_]+_PER_MINUTE$`)
)

// ErrIncompleteSpec is returned by Check for a spec missing a required part.
var ErrIncompleteSpec = errors.New("incomplete tool spec")

// ErrNotBound is the cause of a call on a spec that was declared but never
// bound to a handler (a listing's spec).
var ErrNotBound = errors.New("tool declared but not bound")

// ErrNotAdmitted is the cause of an Invoke without the guard chain's proof
// of admission.
var ErrNotAdmitted = errors.New("tool invoked outside the guard chain")

// Check reports whether the spec is complete: a lower_snake_case name, a
// known family, a resource:verb scope, a per-minute ceiling, a description
// with an Example: line, and input and output types whose schemas derive.
// The answer is computed once.
func (t ToolSpec) Check() error {
	if t.shape == nil {
		return fmt.Errorf("%w: %s: a tool must be declared with Define", ErrIncompleteSpec, t.def.Name)
	}
	return t.shape.derive(t.def)
}

func checkDef(def ToolDef, listedIn Family) error {
	fail := func(why string) error {
		return fmt.Errorf("%w: %s: %s", ErrIncompleteSpec, def.Name, why)
	}
	switch {
	case !namePattern.MatchString(def.Name):
		return fail("name must be lower_snake_case")
	case def.Family == "":
		return fail("family is required")
	case !slices.Contains(Families, def.Family):
		return fail("unknown family")
	case !scopePattern.MatchString(def.Scope):
		return fail("scope is required (resource:verb)")
	case !varPattern.MatchString(def.Ceiling.Var) || def.Ceiling.Default <= 0:
		return fail("a per-minute ceiling (variable and positive default) is required")
	case strings.TrimSpace(def.Description) == "":
		return fail("description is required")
	case !strings.Contains(def.Description, "Example:"):
		return fail("description needs an Example: line")
	case listedIn != "" && listedIn != def.Family:
		return fail(fmt.Sprintf("a %s tool is listed in the %s family", def.Family, listedIn))
	}
	return nil
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

// Annotations returns the behaviour hints.
func (t ToolSpec) Annotations() Annotations { return t.def.Annotations }

// Input returns the input schema, derived on first use. It panics on a spec
// that fails Check, which core.New refuses before any call.
func (t ToolSpec) Input() *Schema { return t.schemas().input }

// Output returns the output schema, derived on first use.
func (t ToolSpec) Output() *Schema { return t.schemas().output }

func (t ToolSpec) schemas() *shape {
	if err := t.Check(); err != nil {
		panic(err)
	}
	return t.shape
}

// Bound reports whether the spec has a handler (Bind or NotConfigured).
func (t ToolSpec) Bound() bool { return t.run != nil }

// IsZero reports whether the spec was never built.
func (t ToolSpec) IsZero() bool { return t.def.Name == "" }

// Invoke validates args (raw decoded as a JSON object, numbers as
// json.Number) against the input schema and runs the bound handler with
// raw decoded into its input type. Only the guard chain can call it, after
// admission: adm is its proof, which no package outside core/ can make
// (see core/internal/chain), and the zero proof is refused. Every call
// from Go code goes through core.App.Call.
func (t ToolSpec) Invoke(ctx context.Context, adm chain.Admitted, call Call, raw json.RawMessage, args map[string]any) (Result, error) {
	if !adm.OK() {
		return Result{}, ErrNotAdmitted
	}
	if err := t.Input().Validate(args); err != nil {
		return Result{}, Invalid("%s", Sentence(err.Error()))
	}
	if t.run == nil {
		return Result{}, ErrNotBound
	}
	return t.run(ctx, call, raw)
}

// Sentence renders a caller-safe reason as a message: capitalised, with a
// full stop.
func Sentence(reason string) string {
	if reason == "" {
		return reason
	}
	return strings.ToUpper(reason[:1]) + reason[1:] + "."
}
