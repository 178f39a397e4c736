package contexttools

import "time"

// SetIndexDeadline shortens the index's time limit for a test and returns
// the function restoring it.
func SetIndexDeadline(d time.Duration) (restore func()) {
	old := indexDeadline
	indexDeadline = d
	return func() { indexDeadline = old }
}
