package ports

import "errors"

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
