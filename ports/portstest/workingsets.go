package portstest

import (
	"context"
	"slices"
	"sync"

	"github.com/arrowhead-go/arrowhead/ports"
)

// WorkingSets is an in-memory ports.WorkingSets: a test double only (the
// server keeps its working sets in the embedded store). It passes
// RunWorkingSetsContract.
type WorkingSets struct {
	limits ports.WorkingSetLimits
	mu     sync.Mutex
	sets   map[string]map[string][]ports.WorkingSetItem // owner -> name -> items
	total  int
}

// NewWorkingSets returns an empty store under limits.
func NewWorkingSets(limits ports.WorkingSetLimits) *WorkingSets {
	return &WorkingSets{limits: limits, sets: map[string]map[string][]ports.WorkingSetItem{}}
}

// Get implements ports.WorkingSets.
func (w *WorkingSets) Get(_ context.Context, owner, name string) (ports.WorkingSet, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	items, ok := w.sets[owner][name]
	if !ok {
		return ports.WorkingSet{}, ports.ErrNotFound
	}
	return ports.WorkingSet{Name: name, Items: slices.Clone(items)}, nil
}

// Pin implements ports.WorkingSets.
func (w *WorkingSets) Pin(_ context.Context, owner, name string, add []ports.WorkingSetItem) (ports.WorkingSet, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	owned := w.sets[owner]
	items, exists := owned[name]
	if !exists {
		if len(owned) >= w.limits.MaxSetsPerOwner {
			return ports.WorkingSet{}, ports.ErrTooManySets
		}
		if w.total >= w.limits.MaxSetsTotal {
			return ports.WorkingSet{}, ports.ErrSetsExhausted
		}
	}
	merged, err := ports.MergePins(items, add, w.limits.MaxItemsPerSet)
	if err != nil {
		return ports.WorkingSet{}, err
	}
	if owned == nil {
		owned = map[string][]ports.WorkingSetItem{}
		w.sets[owner] = owned
	}
	if !exists {
		w.total++
	}
	owned[name] = merged
	return ports.WorkingSet{Name: name, Items: slices.Clone(merged)}, nil
}

// Unpin implements ports.WorkingSets.
func (w *WorkingSets) Unpin(_ context.Context, owner, name string, keys []ports.WorkingSetItem) (ports.WorkingSet, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	items, ok := w.sets[owner][name]
	if !ok {
		return ports.WorkingSet{}, ports.ErrNotFound
	}
	kept := ports.Unpinned(items, keys)
	w.sets[owner][name] = kept
	return ports.WorkingSet{Name: name, Items: slices.Clone(kept)}, nil
}

// Delete implements ports.WorkingSets.
func (w *WorkingSets) Delete(_ context.Context, owner, name string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.sets[owner][name]; !ok {
		return ports.ErrNotFound
	}
	delete(w.sets[owner], name)
	if len(w.sets[owner]) == 0 {
		delete(w.sets, owner)
	}
	w.total--
	return nil
}
