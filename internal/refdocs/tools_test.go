package refdocs

import (
	"slices"
	"testing"
)

// TestArgumentRowsFlattenTheSchema: nested objects and array elements get
// rows of their own, required comes from the enclosing object, and each
// bound is stated in words.
func TestArgumentRowsFlattenTheSchema(t *testing.T) {
	schema, err := asJSON(map[string]any{
		"type":     "object",
		"required": []string{"name", "items"},
		"properties": map[string]any{
			"name": map[string]any{"type": "string", "description": "A name.", "minLength": 1, "maxLength": 64, "pattern": "^[a-z|]+$"},
			"k":    map[string]any{"type": "integer", "description": "How many.", "minimum": 1},
			"mode": map[string]any{"type": "string", "description": "Mode.", "enum": []string{"a", "b"}},
			"tags": map[string]any{"type": "array", "description": "Tags.", "maxItems": 5, "items": map[string]any{"type": "string", "maxLength": 10}},
			"meta": map[string]any{"type": "object", "description": "Metadata.", "maxProperties": 3,
				"additionalProperties": map[string]any{"type": "string", "maxLength": 100}},
			"items": map[string]any{"type": "array", "description": "Items.", "items": map[string]any{
				"type": "object", "required": []string{"id"},
				"properties": map[string]any{"id": map[string]any{"type": "string", "description": "Id."}},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := argumentRows("", schema)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"`items`", "array of object", "yes", "", "Items."},
		{"`items[].id`", "string", "yes", "", "Id."},
		{"`k`", "integer", "no", "at least 1", "How many."},
		{"`meta`", "object of string", "no", "entries: at most 3; each value length at most 100", "Metadata."},
		{"`mode`", "string", "no", "one of `a`, `b`", "Mode."},
		{"`name`", "string", "yes", "length 1 to 64; pattern `^[a-z\\|]+$`", "A name."},
		{"`tags`", "array of string", "no", "items: at most 5; each element length at most 10", "Tags."},
	}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("rows:\n%q\nwant:\n%q", rows, want)
	}
}

// TestParagraphKeepsBlockMarkersLiteral: text that would open a list, a
// heading or a quote at the start of a line stays text.
func TestParagraphKeepsBlockMarkersLiteral(t *testing.T) {
	for in, want := range map[string]string{
		"- not a list":  `\- not a list`,
		"# not a title": `\# not a title`,
		"1. not a list": `1\. not a list`,
		"plain":         "plain",
	} {
		if got := paragraph(in); got != want {
			t.Errorf("paragraph(%q) = %q, want %q", in, got, want)
		}
	}
}
