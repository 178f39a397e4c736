package core

import (
	"fmt"
	"reflect"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// Components are what one family contributes to the catalog.
type Components struct {
	Tools     []catalog.ToolSpec
	Resources []catalog.ResourceSpec
	Prompts   []catalog.PromptSpec
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
