package catalog_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/internal/chain"
)

// TestNoExportedWayToRunAHandler: a tool's handler runs only through the
// guard chain, so every method a package outside the catalog can call that
// takes a Call (what running a handler needs) also takes the chain's proof
// of admission, which only package core makes (see core/internal/chain).
func TestNoExportedWayToRunAHandler(t *testing.T) {
	call, proof := reflect.TypeFor[catalog.Call](), reflect.TypeFor[chain.Admitted]()
	for _, typ := range []reflect.Type{reflect.TypeFor[catalog.ToolSpec](), reflect.TypeFor[*catalog.ToolSpec]()} {
		for m := range typ.Methods() {
			ins := slices.Collect(m.Type.Ins())
			if slices.Contains(ins, call) && !slices.Contains(ins, proof) {
				t.Errorf("%s.%s takes a catalog.Call without the chain's admission: it would run the handler around the guard chain", typ, m.Name)
			}
		}
	}
}
