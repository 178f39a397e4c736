package core

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// Components are what one family contributes to the catalog.
type Components struct {
	Tools     []catalog.ToolSpec
	Resources []catalog.ResourceSpec
	Prompts   []catalog.PromptSpec
}

// LegacyFamily is the two-list family shape (Declare and Bind) that
// Family replaces; families move to Family one by one, and this type goes
// when the last has. P is a struct of the ports the family's
// tools use; each tool's handler closes over only the ones it reads.
//
// A family is served when the profile selects its ID and its Gate (if any)
// is open. It is then bound: every field of P must be set, or New refuses
// to build the App and names the missing port. A field tagged
// `port:"optional"` may be nil: the family's Bind decides, in one place,
// which tools are then served as catalog.Tool.NotConfigured.
type LegacyFamily[P any] struct {
	ID catalog.Family
	// Gate, when set, must also hold for the family to be served (exec
	// needs ARROWHEAD_EXEC_ENABLED, for instance).
	Gate func(*settings.Settings) bool
	// GateDoc states Gate's condition for the reference documentation,
	// naming each variable it reads in backquotes ("`ARROWHEAD_EXEC_ENABLED`
	// is true"); set exactly when Gate is. A conformance test holds the two
	// in agreement.
	GateDoc string
	// Declare lists the family's components under s without any port: its
	// tools as unbound specs (catalog.Tool.Spec), its resources and prompts
	// as listed. Listings, snapshots and the integrity digest read it; it
	// opens nothing and is never served.
	Declare func(s *settings.Settings) Components
	// Bind returns the same components, served from p.
	Bind func(s *settings.Settings, p P) Components
}

// Member is a family as New takes it: bound to its ports (Family.With) or
// declared only (Family.Declared).
type Member interface {
	familyID() catalog.Family
	unbound() Member
	gate(*settings.Settings) bool
	gateDoc() (doc string, gated bool)
	components(*settings.Settings) (Components, error)
}

// GateOf returns the family a member declares, its gate's stated condition
// and whether it has a gate at all, for listings and documentation.
func GateOf(m Member) (id catalog.Family, doc string, gated bool) {
	doc, gated = m.gateDoc()
	return m.familyID(), doc, gated
}

// Declared returns members as declared only, whatever ports they were
// given: a listing built from them opens and serves nothing.
func Declared(members []Member) []Member {
	out := make([]Member, len(members))
	for i, m := range members {
		out[i] = m.unbound()
	}
	return out
}

// With binds the family to its ports.
func (f LegacyFamily[P]) With(p P) Member { return bound[P]{f: f, ports: p} }

// Declared is the family unbound, for listings: its tools refuse to run.
func (f LegacyFamily[P]) Declared() Member { return declared[P]{f} }

type bound[P any] struct {
	f     LegacyFamily[P]
	ports P
}

type declared[P any] struct{ f LegacyFamily[P] }

func (b bound[P]) familyID() catalog.Family          { return b.f.ID }
func (b bound[P]) unbound() Member                   { return declared[P]{b.f} }
func (d declared[P]) unbound() Member                { return d }
func (b bound[P]) gate(s *settings.Settings) bool    { return b.f.Gate == nil || b.f.Gate(s) }
func (d declared[P]) familyID() catalog.Family       { return d.f.ID }
func (d declared[P]) gate(s *settings.Settings) bool { return d.f.Gate == nil || d.f.Gate(s) }
func (b bound[P]) gateDoc() (string, bool)           { return b.f.GateDoc, b.f.Gate != nil }
func (d declared[P]) gateDoc() (string, bool)        { return d.f.GateDoc, d.f.Gate != nil }

func (d declared[P]) components(s *settings.Settings) (Components, error) {
	if d.f.Declare == nil {
		return Components{}, fmt.Errorf("%w: the %s family declares nothing", catalog.ErrIncompleteSpec, d.f.ID)
	}
	return d.f.Declare(s), nil
}

// components checks the ports, binds, and proves the bound components are
// the declared ones (so a listing cannot drift from what is served).
func (b bound[P]) components(s *settings.Settings) (Components, error) {
	if b.f.Declare == nil || b.f.Bind == nil {
		return Components{}, fmt.Errorf("%w: the %s family needs Declare and Bind", catalog.ErrIncompleteSpec, b.f.ID)
	}
	if missing := missingPorts(b.ports); len(missing) > 0 {
		return Components{}, fmt.Errorf("%w: the %s family needs %v", ErrMissingDependency, b.f.ID, missing)
	}
	c := b.f.Bind(s, b.ports)
	if !slices.Equal(names(c), names(b.f.Declare(s))) {
		return Components{}, fmt.Errorf("%w: the %s family binds other components than it declares", catalog.ErrIncompleteSpec, b.f.ID)
	}
	for _, t := range c.Tools {
		if !t.Bound() {
			return Components{}, fmt.Errorf("%w: the %s family leaves %s unbound", catalog.ErrIncompleteSpec, b.f.ID, t.Name())
		}
	}
	return c, nil
}

// missingPorts names the unset fields of a ports struct that are not
// tagged optional.
func missingPorts(p any) []string {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Struct {
		return []string{"a ports struct"}
	}
	var missing []string
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Tag.Get("port") == "optional" {
			continue
		}
		switch fv := v.Field(i); fv.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Func, reflect.Slice, reflect.Chan:
			if fv.IsNil() {
				missing = append(missing, f.Name)
			}
		}
	}
	return missing
}

func names(c Components) []string {
	var out []string
	for _, t := range c.Tools {
		out = append(out, "tool:"+t.Name())
	}
	for _, r := range c.Resources {
		out = append(out, "resource:"+r.Name)
	}
	for _, p := range c.Prompts {
		out = append(out, "prompt:"+p.Name)
	}
	return out
}

// Assembled is a family whose components are built already: tools bound
// to their handlers, resources and prompts with theirs (a test's probe
// tools, an embedder's one-off tool). It reads no Config, takes no ports
// and has no gate; a listing reads it as it is. A tool left unbound is
// refused when it is served.
func Assembled(id catalog.Family, c Components) Member { return assembled{id: id, c: c} }

type assembled struct {
	id       catalog.Family
	c        Components
	declared bool
}

func (a assembled) familyID() catalog.Family     { return a.id }
func (a assembled) unbound() Member              { a.declared = true; return a }
func (a assembled) gate(*settings.Settings) bool { return true }
func (a assembled) gateDoc() (string, bool)      { return "", false }

func (a assembled) components(*settings.Settings) (Components, error) {
	if !a.declared {
		for _, t := range a.c.Tools {
			if !t.Bound() {
				return Components{}, fmt.Errorf("%w: the %s family leaves %s unbound", catalog.ErrIncompleteSpec, a.id, t.Name())
			}
		}
	}
	return a.c, nil
}
