package data

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

func TestRowsReplySanitizesWithoutTouchingTheRunnersRows(t *testing.T) {
	hostile := "a\x1b[31mb\u202e"
	values := [][]any{
		{json.Number("1"), "plain", []any{"x", hostile}},
		{json.Number("2"), hostile, map[string]any{"k\u200b": hostile, "<&>": "é"}},
		{nil, true, []any{}},
	}
	res := ports.SQLResult{Columns: []string{"id", "na\u202eme", "tags"}, Rows: cells(t, values)}
	orig := cells(t, values)
	r, err := rowsReply(res, ports.SQLLimits{})
	if err != nil {
		t.Fatal(err)
	}
	clean := content.SanitizeString(hostile)
	want := [][]any{
		{json.Number("1"), "plain", []any{"x", clean}},
		{json.Number("2"), clean, map[string]any{"k": clean, "<&>": "é"}},
		{nil, true, []any{}},
	}
	// Each cell is what encoding/json writes for the sanitized value.
	if got, want := cells(t, want), r.Out.Rows; !reflect.DeepEqual(got, want) {
		t.Errorf("rows = %s, want %s", got, want)
	}
	if !reflect.DeepEqual(res.Rows, orig) {
		t.Errorf("the runner's rows changed: %s", res.Rows)
	}
	if &r.Out.Rows[2][0] != &res.Rows[2][0] {
		t.Error("a row that sanitizing leaves as it is was copied")
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
	var values [][]any
	for i := 1; i <= 100; i++ {
		n := json.Number(strings.Repeat("1", 1+i%3))
		values = append(values, []any{n, "row " + string(n)})
	}
	res := ports.SQLResult{Columns: []string{"g", "label"}, Rows: cells(b, values)}
	b.ReportAllocs()
	for b.Loop() {
		if r, err := rowsReply(res, ports.SQLLimits{}); err != nil || len(r.Out.Rows) != 100 {
			b.Fatal(err)
		}
	}
}

// cells encodes rows of JSON-ready values as a runner hands them over.
func cells(t testing.TB, values [][]any) [][]json.RawMessage {
	t.Helper()
	out := make([][]json.RawMessage, len(values))
	for i, r := range values {
		out[i] = make([]json.RawMessage, len(r))
		for j, v := range r {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			out[i][j] = b
		}
	}
	return out
}

// TestRowsReplyRefusesCellsThatAreNotJSON: a runner that broke the port's
// promise fails the call rather than passing bytes into the answer
// unsanitized.
func TestRowsReplyRefusesCellsThatAreNotJSON(t *testing.T) {
	for _, cell := range []string{"\"a\x1bb\"", "1 2", "{", "\"\\x\""} {
		res := ports.SQLResult{Columns: []string{"c"}, Rows: [][]json.RawMessage{{json.RawMessage(cell)}}}
		if _, err := rowsReply(res, ports.SQLLimits{}); err == nil {
			t.Errorf("%q: accepted", cell)
		}
	}
}

// TestRowsReplySaysWhatCutTheResult: the text a model reads says, after
// the frame, which bounds cut the rows and which settings set them, as
// the structured truncated field does; a whole result carries no note.
func TestRowsReplySaysWhatCutTheResult(t *testing.T) {
	lim := ports.SQLLimits{MaxRows: 2, MaxColumns: 5, MaxCellBytes: 40, MaxTotalBytes: 900}
	rows := cells(t, [][]any{{json.Number("1")}, {json.Number("2")}})
	whole, err := rowsReply(ports.SQLResult{Columns: []string{"g"}, Rows: rows}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if end := "<<< UNTRUSTED-DATA-END " + whole.Out.Marker + " >>>"; !strings.HasSuffix(strings.TrimSpace(whole.Text), end) {
		t.Errorf("a whole result's text goes on after its frame:\n%s", whole.Text)
	}
	cut, err := rowsReply(ports.SQLResult{Columns: []string{"g"}, Rows: rows, Truncated: []string{"rows", "cell_bytes"}}, lim)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(cut.Text, "<<< UNTRUSTED-DATA-END "+cut.Out.Marker+" >>>")
	if !ok {
		t.Fatalf("no frame end in:\n%s", cut.Text)
	}
	for _, want := range []string{"The result is incomplete", "first 2 rows", "ARROWHEAD_SQL_MAX_ROWS", "the query returned more",
		"longer than 40 bytes", "ARROWHEAD_SQL_MAX_BYTES"} {
		if !strings.Contains(after, want) {
			t.Errorf("the note after the frame lacks %q:\n%s", want, after)
		}
	}
	if strings.Contains(after, "columns are shown") {
		t.Errorf("the note names a bound that did not cut:\n%s", after)
	}
	if !slices.Equal(cut.Out.Truncated, []string{"rows", "cell_bytes"}) {
		t.Errorf("truncated = %q", cut.Out.Truncated)
	}
}
