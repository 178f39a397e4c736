package catalog_test

import (
	"reflect"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/catalog"
)

// TestNoExportedWayToRunAHandler: a tool's handler runs only through the
// guard chain, so no method a package outside the catalog can call takes
// a Call (what running a handler needs).
func TestNoExportedWayToRunAHandler(t *testing.T) {
	call := reflect.TypeFor[catalog.Call]()
	for _, typ := range []reflect.Type{reflect.TypeFor[catalog.ToolSpec](), reflect.TypeFor[*catalog.ToolSpec]()} {
		for m := range typ.Methods() {
			for in := range m.Type.Ins() {
				if in == call {
					t.Errorf("%s.%s takes a catalog.Call: it would run the handler around the guard chain", typ, m.Name)
				}
			}
		}
	}
}
