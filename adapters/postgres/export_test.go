package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// WithConnForTest runs fn on one of the pool's connections. The pgvector
// integration tests run their fixture SQL through it: PGlite admits one
// connection at a time, so the tests keep one and share it.
func (p *Pool) WithConnForTest(ctx context.Context, fn func(*pgx.Conn) error) error {
	c, err := p.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return fn(c.Conn())
}

// CellValues decodes a result's cells and checks each is the JSON
// encoding/json writes for its value (see cellValues).
var CellValues = cellValues
