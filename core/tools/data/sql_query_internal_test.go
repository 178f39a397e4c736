package data

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

func TestRowsReplySanitizesWithoutTouchingTheRunnersRows(t *testing.T) {
	hostile := "a\x1b[31mb\u202e"
	res := ports.SQLResult{
		Columns: []string{"id", "na\u202eme", "tags"},
		Rows: [][]any{
			{json.Number("1"), "plain", []any{"x", hostile}},
			{json.Number("2"), hostile, map[string]any{"k\u200b": hostile}},
			{nil, true, []any{}},
		},
	}
	orig := [][]any{
		{json.Number("1"), "plain", []any{"x", hostile}},
		{json.Number("2"), hostile, map[string]any{"k\u200b": hostile}},
		{nil, true, []any{}},
	}
	r := rowsReply(res)
	clean := content.SanitizeString(hostile)
	want := [][]any{
		{json.Number("1"), "plain", []any{"x", clean}},
		{json.Number("2"), clean, map[string]any{"k": clean}},
		{nil, true, []any{}},
	}
	if !reflect.DeepEqual(r.Out.Rows, want) {
		t.Errorf("rows = %#v, want %#v", r.Out.Rows, want)
	}
	if !reflect.DeepEqual(res.Rows, orig) {
		t.Errorf("the runner's rows changed: %#v", res.Rows)
	}
	if got := r.Out.Columns; !reflect.DeepEqual(got, []string{"id", "name", "tags"}) {
		t.Errorf("columns = %q", got)
	}
	// The framed body is the JSON of {"columns", "rows"} as encoding/json
	// writes a map of them.
	body, err := json.Marshal(map[string]any{"columns": r.Out.Columns, "rows": want})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Text, "\n"+string(body)+"\n") {
		t.Errorf("framed text does not hold %s:\n%s", body, r.Text)
	}
}

// BenchmarkRowsReply100 renders the 100-row result of the SQL runner's
// benchmark statement (an int and a short text per row).
func BenchmarkRowsReply100(b *testing.B) {
	res := ports.SQLResult{Columns: []string{"g", "label"}}
	for i := 1; i <= 100; i++ {
		n := json.Number(strings.Repeat("1", 1+i%3))
		res.Rows = append(res.Rows, []any{n, "row " + string(n)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := rowsReply(res); len(r.Out.Rows) != 100 {
			b.Fatal(len(r.Out.Rows))
		}
	}
}
