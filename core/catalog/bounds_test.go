package catalog_test

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/core/catalog"
)

type countedThing struct {
	N int `json:"n" minimum:"0" maximum:"$count"`
}

// TestCountBoundIsCatalogWide: "$count" needs no Bounds entry, renders as
// MaxCount, and may not be supplied a second time.
func TestCountBoundIsCatalogWide(t *testing.T) {
	s, err := catalog.SchemaFor[countedThing](nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Properties["n"].Maximum; m == nil || *m != 2147483648 {
		t.Fatalf("maximum %v, want %d", m, catalog.MaxCount)
	}
	if _, err := catalog.SchemaFor[countedThing](catalog.Bounds{"count": 10}); err == nil {
		t.Fatal("a tool's own $count bound was accepted beside the catalog-wide one")
	}
}
