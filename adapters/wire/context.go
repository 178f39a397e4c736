package wire

import (
	"context"
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/adapters/tokenizer"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/contexttools"
	"github.com/arrowhead-go/arrowhead/ports"
)

// workingSetOwnerAllowances bounds the working set store as a whole: it
// holds at most this many owners' full allowance of sets
// (ARROWHEAD_WORKINGSET_MAX_SETS each), so many distinct callers cannot
// grow it without limit either.
const workingSetOwnerAllowances = 100

// contextPorts are the context family's own adapters.
type contextPorts struct {
	sets      ports.WorkingSets
	tokenizer ports.Tokenizer
}

// openContext opens the working sets and the offline tokenizer, when the
// profile serves the context family.
func (rt *Runtime) openContext(ctx context.Context, s *settings.Settings) (contextPorts, error) {
	if !contexttools.Family.Serves(s) {
		return contextPorts{}, nil
	}
	sets, err := rt.openWorkingSets(ctx, s)
	if err != nil {
		return contextPorts{}, err
	}
	tok, err := tokenizer.New()
	if err != nil {
		return contextPorts{}, fmt.Errorf("pack_context: %w", err)
	}
	return contextPorts{sets: sets, tokenizer: tok}, nil
}

// openWorkingSets opens the working sets on the state database
// (ARROWHEAD_STATE_DSN), which every replica shares, or else in the
// embedded store.
func (rt *Runtime) openWorkingSets(ctx context.Context, s *settings.Settings) (ports.WorkingSets, error) {
	limits := workingSetLimits(s)
	if s.StateDSN != "" {
		pool, err := rt.statePool(ctx, s)
		if err != nil {
			return nil, err
		}
		sets, err := postgres.NewWorkingSets(pool, limits)
		if err != nil {
			return nil, err
		}
		rt.Health = append(rt.Health, sets)
		return sets, nil
	}
	store, err := rt.sharedStore(ctx, s)
	if err != nil {
		return nil, err
	}
	return sqlite.NewWorkingSets(store, limits)
}

// workingSetLimits are the working sets' bounds from the settings.
func workingSetLimits(s *settings.Settings) ports.WorkingSetLimits {
	return ports.WorkingSetLimits{
		MaxSetsPerOwner: s.WorkingsetMaxSets,
		MaxItemsPerSet:  s.WorkingsetMaxItems,
		MaxSetsTotal:    s.WorkingsetMaxSets * workingSetOwnerAllowances,
	}
}
