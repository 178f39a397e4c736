package data

import (
	"context"
	"encoding/json"
	"errors"
	"sort"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// MaxSQLParams bounds the named parameters of one query.
const MaxSQLParams = 100

// SQLQuery declares sql_query.
func SQLQuery(d Deps) catalog.ToolSpec {
	s := d.Settings
	scalar := &catalog.Schema{Description: "A string, number, boolean or null bound to :name."}
	params := &catalog.Schema{Type: "object", Description: "Values for the query's :named parameters.", Additional: scalar, MaxProperties: catalog.Ptr(MaxSQLParams)}
	return catalog.MustTool(catalog.ToolDef{
		Name:    "sql_query",
		Family:  catalog.FamilyData,
		Scope:   "sql:read",
		Ceiling: catalog.Ceiling{Var: "ARROWHEAD_SQL_QUERY_PER_MINUTE", Default: 60},
		Description: "Run one read-only SELECT and return its rows as untrusted data; every referenced table is authorized and results are capped. Bind values with :named parameters. " +
			"Example: sql_query(query=\"select id, email from users where org = :org\", params={\"org\": \"acme\"})",
		Input: catalog.Object(map[string]*catalog.Schema{
			"query":  catalog.String("A single SELECT statement.", s.SQLQueryMaxLength),
			"params": params,
		}, "query"),
		Output: catalog.Object(map[string]*catalog.Schema{
			"columns":   catalog.Array("Sanitized column names.", catalog.String("", 0), 0),
			"rows":      catalog.Array("Rows of JSON values (untrusted data).", catalog.Array("", catalog.Any(""), 0), 0),
			"row_count": catalog.Integer("Rows returned.", 0, 1<<31),
			"truncated": catalog.Array("Bounds that cut the result: rows, columns, cell_bytes, total_bytes.", catalog.String("", 0), 0),
			"marker":    catalog.String("The untrusted-data marker framing the text answer.", 0),
			"untrusted": catalog.Boolean("Always true."),
		}, "columns", "rows", "row_count", "truncated", "marker", "untrusted"),
		Annotations: catalog.Annotations{Title: "SQL query", ReadOnly: true},
		Handler: func(ctx context.Context, call catalog.Call) (catalog.Result, error) {
			var args struct {
				Query  string         `json:"query"`
				Params map[string]any `json:"params"`
			}
			if err := call.Bind(&args); err != nil {
				return catalog.Result{}, err
			}
			if d.SQL == nil || d.Vetter == nil {
				return catalog.Result{}, catalog.Unavailable("The SQL connector is not configured (ARROWHEAD_SQL_DSN).")
			}
			q, err := d.Vetter.Vet(args.Query)
			if err != nil {
				if r, ok := ports.AsSQLRefusal(err); ok {
					return catalog.Result{}, catalog.Invalid("The statement is refused: %s.", r.Reason)
				}
				return catalog.Result{}, err
			}
			if len(q.Tables) == 0 {
				if d.Authorizer == nil || !d.Authorizer.Authorize(ctx, call.Principal, ports.ActionQuery, ports.Resource{Kind: ports.KindTableless}).Allowed {
					return catalog.Result{}, catalog.Denied()
				}
			}
			for _, t := range q.Tables {
				if err := d.authorizeTable(ctx, call.Principal, ports.ActionQuery, t); err != nil {
					return catalog.Result{}, err
				}
			}
			bound, err := bindParams(q.Params, args.Params)
			if err != nil {
				return catalog.Result{}, err
			}
			res, err := d.SQL.Query(ctx, q, bound, ports.SQLLimits{
				MaxRows:       s.SQLMaxRows,
				MaxColumns:    s.SQLMaxColumns,
				MaxCellBytes:  s.SQLMaxBytes,
				MaxTotalBytes: s.SQLMaxBytes,
				Timeout:       settings.Seconds(s.SQLTimeoutSeconds),
			})
			if err != nil {
				return catalog.Result{}, sqlRefusal(err)
			}
			return rowsResult(res), nil
		},
	})
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
	case ports.SQLRejected:
		return catalog.Refuse(catalog.KindAuthorization, "The database refused the query (permission or read-only).")
	case ports.SQLInvalid:
		return catalog.Invalid("The database rejected the query (unknown name, type mismatch or bad value).")
	}
	return catalog.Failed("The query failed.")
}

// rowsResult sanitizes column names and string values and frames the rows.
func rowsResult(res ports.SQLResult) catalog.Result {
	cols := make([]any, len(res.Columns))
	for i, c := range res.Columns {
		cols[i] = content.SanitizeString(c)
	}
	rows := make([]any, len(res.Rows))
	for i, r := range res.Rows {
		row := make([]any, len(r))
		for j, v := range r {
			row[j] = sanitizeValue(v)
		}
		rows[i] = row
	}
	truncated := make([]any, 0, len(res.Truncated))
	for _, t := range res.Truncated {
		truncated = append(truncated, t)
	}
	body, _ := json.Marshal(map[string]any{"columns": cols, "rows": rows})
	framed := content.Frame(string(body), content.NewSource("sql", "query", "json", body))
	return catalog.Result{
		Structured: map[string]any{
			"columns":   cols,
			"rows":      rows,
			"row_count": len(rows),
			"truncated": truncated,
			"marker":    framed.Marker,
			"untrusted": true,
		},
		Text: framed.Text,
	}
}

// sanitizeValue strips control and invisible characters from every string
// in a row value, keys included.
func sanitizeValue(v any) any {
	switch t := v.(type) {
	case string:
		return content.SanitizeString(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = sanitizeValue(e)
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(map[string]any, len(t))
		for _, k := range keys {
			out[content.SanitizeString(k)] = sanitizeValue(t[k])
		}
		return out
	}
	return v
}
