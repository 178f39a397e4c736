package catalog_test

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/security"
)

type countedThing struct {
	N    int    `json:"n" minimum:"0" maximum:"$count"`
	Path string `json:"path" maxLength:"$path"`
}

// TestCountBoundIsCatalogWide: "$count" and "$path" need no Bounds entry,
// render as MaxCount and the longest path CleanPath admits, and may not be
// supplied a second time.
func TestCountBoundIsCatalogWide(t *testing.T) {
	s, err := catalog.SchemaFor[countedThing](nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Properties["n"].Maximum; m == nil || *m != 2147483648 {
		t.Fatalf("maximum %v, want %d", m, catalog.MaxCount)
	}
	if m := s.Properties["path"].MaxLength; m == nil || *m != security.MaxPathBytes {
		t.Fatalf("maxLength %v, want %d", m, security.MaxPathBytes)
	}
	for _, name := range []string{"count", "path"} {
		if _, err := catalog.SchemaFor[countedThing](catalog.Bounds{name: 10}); err == nil {
			t.Fatalf("a tool's own $%s bound was accepted beside the catalog-wide one", name)
		}
	}
}
