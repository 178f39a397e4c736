package ports

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// VettedQuery is a statement the QueryVetter admitted.
type VettedQuery struct {
	// SQL is the text to send to the database: the vetter's own
	// re-serialization of the parsed tree, with named parameters replaced by
	// positional placeholders ($1, $2, ...).
	SQL string
	// Params lists the named parameters in placeholder order ($1 first).
	Params []string
	// Tables lists every table the statement reads, schema-qualified when the
	// statement qualified it, lower-cased, deduplicated, in first-seen order.
	// CTE names are not tables.
	Tables []string
}

// QueryVetter admits only a single read-only SELECT. It must be safe for
// concurrent use.
type QueryVetter interface {
	Vet(sql string) (VettedQuery, error)
}

// SQLRefusal is the vetter's refusal. Reason is caller-safe: it never
// quotes the statement, an identifier, or a parser message.
type SQLRefusal struct {
	Reason string
}

func (e *SQLRefusal) Error() string { return e.Reason }

// AsSQLRefusal returns the refusal in err's chain, if any.
func AsSQLRefusal(err error) (*SQLRefusal, bool) {
	var r *SQLRefusal
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}

// SQLLimits bound one query's result.
type SQLLimits struct {
	MaxRows    int
	MaxColumns int
	// MaxCellBytes and MaxTotalBytes are measured in bytes of the JSON-ready
	// values.
	MaxCellBytes  int
	MaxTotalBytes int
	// Timeout is the server-side statement timeout and the in-process
	// deadline.
	Timeout time.Duration
	// TempFileBytes bounds the temporary files the statement may write
	// (PostgreSQL's temp_file_limit) and WorkMemBytes the memory each sort
	// or hash may use before it spills to them (work_mem). Zero takes the
	// runner's default; negative leaves the role's own setting in force.
	TempFileBytes int64
	WorkMemBytes  int64
}

// SQLResult is a bounded result set. Each cell is the compact JSON text
// encoding/json writes for the cell's JSON-ready value (a string, bool,
// json.Number, nil, []any or map[string]any: object keys sorted, HTML
// characters escaped), so a caller can write it into its own JSON as it
// is, or decode it (with json.Decoder.UseNumber) to that value.
// Timestamps are RFC 3339 text, bytea is hex text, numerics are numbers.
type SQLResult struct {
	Columns []string
	Rows    [][]json.RawMessage
	// Truncated names each bound that cut the result, in this order:
	// SQLTruncRows, SQLTruncColumns, SQLTruncCellBytes, SQLTruncTotalBytes.
	Truncated []string
}

// The bounds SQLResult.Truncated names.
const (
	SQLTruncRows       = "rows"
	SQLTruncColumns    = "columns"
	SQLTruncCellBytes  = "cell_bytes"
	SQLTruncTotalBytes = "total_bytes"
)

// SQLRunner runs a vetted statement read-only. Named parameters arrive in
// placeholder order. Implementations run the statement in a read-only
// transaction under a server-side statement timeout and never return driver
// text in an error: errors are *SQLError.
type SQLRunner interface {
	Query(ctx context.Context, q VettedQuery, args []any, lim SQLLimits) (SQLResult, error)
}

// SQLErrorKind classifies a database failure for the caller.
type SQLErrorKind string

// SQL failure kinds.
const (
	SQLUnavailable SQLErrorKind = "unavailable" // cannot connect
	SQLTimeout     SQLErrorKind = "timeout"     // statement timeout or deadline
	SQLRejected    SQLErrorKind = "rejected"    // the database refused it (permission, read-only)
	SQLInvalid     SQLErrorKind = "invalid"     // the database found it invalid (unknown column, type)
	SQLTempFiles   SQLErrorKind = "temp_files"  // the statement needed more temporary file space than TempFileBytes
	SQLFailed      SQLErrorKind = "failed"      // anything else
)

// SQLError is a caller-safe database failure. Err is the driver error, for
// operators only.
type SQLError struct {
	Kind SQLErrorKind
	Err  error
}

func (e *SQLError) Error() string { return "sql " + string(e.Kind) }

// Unwrap returns the driver error.
func (e *SQLError) Unwrap() error { return e.Err }
