package data

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

// MaxSQLParams bounds the named parameters of one query.
const MaxSQLParams = 100

type sqlQueryInput struct {
	Query  string         `json:"query" description:"A single SELECT statement." maxLength:"$sql_length"`
	Params map[string]any `json:"params,omitempty" description:"Values for the query's :named parameters." maxProperties:"$params" values:"description=A string, number, boolean or null bound to :name."`
}

type sqlQueryOutput struct {
	Columns   []string            `json:"columns" description:"Sanitized column names."`
	Rows      [][]json.RawMessage `json:"rows" description:"Rows of JSON values (untrusted data)."`
	RowCount  int                 `json:"row_count" description:"Rows returned." minimum:"0" maximum:"$count"`
	Truncated []string            `json:"truncated" description:"Bounds that cut the result: rows, columns, cell_bytes, total_bytes."`
	Marker    string              `json:"marker" description:"The untrusted-data marker framing the text answer."`
	Untrusted bool                `json:"untrusted" description:"Always true."`
}

// sqlQuery defines sql_query; "$sql_length" is the family's
// ARROWHEAD_SQL_QUERY_MAX_LENGTH bound.
var sqlQuery = catalog.Define[sqlQueryInput, sqlQueryOutput](catalog.ToolDef{
	Name:    "sql_query",
	Family:  catalog.FamilyData,
	Scope:   "sql:read",
	Ceiling: catalog.Ceiling{Var: "ARROWHEAD_SQL_QUERY_PER_MINUTE", Default: 60},
	Description: "Run one read-only SELECT and return its rows as untrusted data; every referenced table is authorized and results are capped. Bind values with :named parameters. " +
		"Example: sql_query(query=\"select id, email from users where org = :org\", params={\"org\": \"acme\"})",
	Annotations: catalog.Annotations{Title: "SQL query", ReadOnly: true},
	Bounds:      catalog.Bounds{"params": MaxSQLParams},
})

// query serves sql_query: the vetter, the runner and the table gate.
func (r *server) query(ctx context.Context, call catalog.Call, in sqlQueryInput) (*catalog.Reply[sqlQueryOutput], error) {
	q, err := r.Vetter.Vet(in.Query)
	if err != nil {
		if refusal, ok := ports.AsSQLRefusal(err); ok {
			return nil, catalog.Invalid("The statement is refused: %s.", refusal.Reason)
		}
		return nil, err
	}
	if len(q.Tables) == 0 {
		if !r.Authorizer.Authorize(ctx, call.Principal, ports.ActionQuery, ports.Resource{Kind: ports.KindTableless}).Allowed {
			return nil, catalog.Denied()
		}
	}
	for _, t := range q.Tables {
		if err := r.authorizeTable(ctx, call.Principal, ports.ActionQuery, t); err != nil {
			return nil, err
		}
	}
	bound, err := bindParams(q.Params, in.Params)
	if err != nil {
		return nil, err
	}
	res, err := r.SQL.Query(ctx, q, bound, r.config.SQLLimits)
	if err != nil {
		return nil, sqlRefusal(err)
	}
	return rowsReply(res, r.config.SQLLimits)
}

// bindParams orders the caller's values by placeholder. Names are never
// echoed: they come from the caller's query text.
func bindParams(names []string, values map[string]any) ([]any, error) {
	args := make([]any, len(names))
	used := map[string]bool{}
	for i, n := range names {
		v, ok := values[n]
		if !ok {
			return nil, catalog.Invalid("A :named parameter in the query has no value in params.")
		}
		switch v.(type) {
		case string, json.Number, bool, nil, float64:
		default:
			return nil, catalog.Invalid("Parameter values must be strings, numbers, booleans or null.")
		}
		args[i] = v
		used[n] = true
	}
	if len(used) != len(values) {
		return nil, catalog.Invalid("params holds a value that no :named parameter in the query uses.")
	}
	return args, nil
}

// megabytes is a limit setting in bytes; its 0 ("leave the role's own
// setting") is the runner's negative.
func megabytes(mb int) int64 {
	if mb <= 0 {
		return -1
	}
	return int64(mb) << 20
}

func sqlRefusal(err error) error {
	var se *ports.SQLError
	if !errors.As(err, &se) {
		return err
	}
	switch se.Kind {
	case ports.SQLUnavailable:
		return catalog.Unavailable("The database is unavailable.")
	case ports.SQLTimeout:
		return catalog.Failed("The query exceeded the statement timeout.")
	case ports.SQLTempFiles:
		return catalog.Failed("The query needed more temporary file space than temp_file_limit allows (ARROWHEAD_SQL_TEMP_FILE_LIMIT_MB); narrow it or add a LIMIT.")
	case ports.SQLRejected:
		return catalog.Refuse(catalog.KindAuthorization, "The database refused the query (permission or read-only).")
	case ports.SQLInvalid:
		return catalog.Invalid("The database rejected the query (unknown name, type mismatch or bad value).")
	}
	return catalog.Failed("The query failed.")
}

// rowsReply sanitizes column names and string values and frames the rows;
// a note after the frame says which of lim's bounds cut them.
func rowsReply(res ports.SQLResult, lim ports.SQLLimits) (*catalog.Reply[sqlQueryOutput], error) {
	cols := make([]string, len(res.Columns))
	for i, c := range res.Columns {
		cols[i] = content.SanitizeString(c)
	}
	// The runner's cells are already the JSON encoding/json writes for
	// them. A cell of printable ASCII without an escape holds only strings
	// that sanitizing leaves as they are, so it is kept as it is; any other
	// is decoded, sanitized and encoded again. A row is copied before its
	// first change: the runner's rows are left as they are, since its
	// result may be shared.
	rows := make([][]json.RawMessage, len(res.Rows))
	for i, r := range res.Rows {
		rows[i] = r
		copied := false
		for j, c := range r {
			if plainJSON(c) {
				continue
			}
			clean, err := sanitizeCell(c)
			if err != nil {
				return nil, err
			}
			if !copied {
				rows[i], copied = slices.Clone(r), true
			}
			rows[i][j] = clean
		}
	}
	// A struct rather than a map: the same JSON (encoding/json writes a
	// map's keys sorted, which is this order), without building the map.
	body, err := json.Marshal(struct {
		Columns []string            `json:"columns"`
		Rows    [][]json.RawMessage `json:"rows"`
	}{cols, rows})
	if err != nil {
		return nil, err
	}
	framed := content.Frame(string(body), content.NewSource("sql", "query", "json", body))
	text := framed.Text
	if note := cutNote(res.Truncated, lim); note != "" {
		text += "\n" + note + "\n"
	}
	return catalog.Answer(sqlQueryOutput{
		Columns:   cols,
		Rows:      rows,
		RowCount:  len(rows),
		Truncated: res.Truncated,
		Marker:    framed.Marker,
		Untrusted: true,
	}, text), nil
}

// cutNote tells the reader of the text answer what the truncated field
// tells a program: which bounds cut the result, and the settings that set
// them. Empty when the result is whole.
func cutNote(truncated []string, lim ports.SQLLimits) string {
	if len(truncated) == 0 {
		return ""
	}
	var parts []string
	for _, t := range truncated {
		switch t {
		case ports.SQLTruncRows:
			parts = append(parts, fmt.Sprintf("only the first %d rows are shown (ARROWHEAD_SQL_MAX_ROWS); the query returned more", lim.MaxRows))
		case ports.SQLTruncColumns:
			parts = append(parts, fmt.Sprintf("only the first %d columns are shown (ARROWHEAD_SQL_MAX_COLUMNS)", lim.MaxColumns))
		case ports.SQLTruncCellBytes:
			parts = append(parts, fmt.Sprintf("values longer than %d bytes are cut (ARROWHEAD_SQL_MAX_BYTES)", lim.MaxCellBytes))
		case ports.SQLTruncTotalBytes:
			parts = append(parts, fmt.Sprintf("the rows stop where the result reached %d bytes (ARROWHEAD_SQL_MAX_BYTES); the query returned more", lim.MaxTotalBytes))
		default:
			parts = append(parts, "it was cut at a bound ("+t+")")
		}
	}
	return "The result is incomplete: " + strings.Join(parts, "; ") + ". Narrow the query (WHERE, LIMIT, fewer columns) to see the rest."
}

// plainJSON reports whether a JSON text is printable ASCII without a
// backslash: every string in it is then printable ASCII as written, which
// content.SanitizeString returns unchanged.
func plainJSON(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return false
		}
	}
	return true
}

// sanitizeCell decodes one cell's JSON (numbers as json.Number), sanitizes
// its strings and encodes it again.
func sanitizeCell(cell json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(cell))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("sql_query: a cell holds more than one JSON value")
	}
	return json.Marshal(sanitizeValue(v))
}

// sanitizeValue strips control and invisible characters from every string
// in a row value, keys included.
func sanitizeValue(v any) any {
	switch t := v.(type) {
	case string:
		if c := content.SanitizeString(t); c != t {
			return c
		}
		return v // unchanged (the commonest cell): not boxed again
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = sanitizeValue(e)
		}
		return out
	case map[string]any:
		// In key order, so that keys sanitizing to one keep the same value.
		out := make(map[string]any, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			out[content.SanitizeString(k)] = sanitizeValue(t[k])
		}
		return out
	}
	return v
}
