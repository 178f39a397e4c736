package catalog_test

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/core/catalog"
)

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "matches", "0 matches"}, {1, "matches", "1 match"}, {1, "memories", "1 memory"},
		{2, "memories", "2 memories"}, {1, "files", "1 file"}, {1, "boxes", "1 box"},
		{1, "pushes", "1 push"}, {9354, "documents", "9,354 documents"}, {1234567, "tasks", "1,234,567 tasks"},
		{-1000, "files", "-1,000 files"},
	} {
		if got := catalog.Count(c.n, c.noun); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
