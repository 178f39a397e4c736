package sqlite

import (
	"context"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// OpenTaskRegistryWith opens a registry whose lease is lease and which
// calls onFire with each timer it fires.
func OpenTaskRegistryWith(ctx context.Context, s *Store, cfg ports.TaskConfig, lease time.Duration, onFire func(ports.Task)) (*TaskRegistry, error) {
	return openTaskRegistry(ctx, s, cfg, taskOptions{lease: lease, onFire: onFire})
}
