//go:build !unix

package sqlite

// turn is a no-op where flock is missing: SQLite's own lock still
// serialises the processes, without the fair hand-over.
type turn struct{}

func openTurn(string) (*turn, error) { return &turn{}, nil }
func (*turn) acquire() error         { return nil }
func (*turn) release()               {}
func (*turn) close() error           { return nil }
