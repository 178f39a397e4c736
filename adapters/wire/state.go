package wire

import (
	"context"
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// statePool opens the pool of the state database (ARROWHEAD_STATE_DSN),
// which working sets, tasks and timers share, sized for River's client
// unless the DSN names a size. It is the pool of any other variable naming
// the same database.
func (rt *Runtime) statePool(ctx context.Context, s *settings.Settings) (*postgres.Pool, error) {
	pool, err := rt.openPool(ctx, s.StateDSN, postgres.WithDefaultMaxConns(postgres.StateMaxConns))
	if err != nil {
		return nil, fmt.Errorf("ARROWHEAD_STATE_DSN: %w", err)
	}
	return pool, nil
}
