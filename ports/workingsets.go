package ports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Working-set item kinds: what a pin refers to. Each is authorized exactly
// as reading it would be (KindDocument and KindRepoFile respectively).
const (
	PinDoc      = "doc"
	PinRepoFile = "repo_file"
)

// Working-set errors. Their text is caller-safe: none carries an owner, a
// set name or an identifier.
var (
	// ErrTooManySets refuses creating a set beyond the owner's bound
	// (ARROWHEAD_WORKINGSET_MAX_SETS).
	ErrTooManySets = errors.New("the working set limit for this caller is reached")
	// ErrSetFull refuses pinning beyond a set's item bound
	// (ARROWHEAD_WORKINGSET_MAX_ITEMS).
	ErrSetFull = errors.New("the working set is full")
	// ErrSetsExhausted refuses creating a set beyond the store-wide bound,
	// so many distinct owners cannot grow the store without limit either.
	ErrSetsExhausted = errors.New("the working set store is full")
	// ErrWorkingSetDamaged is a stored set that does not decode to the
	// stored form (DecodeWorkingSetItems): a damaged value, never a
	// different set.
	ErrWorkingSetDamaged = errors.New("a stored working set is damaged")
)

// WorkingSetItem is one pinned reference.
type WorkingSetItem struct {
	// Kind is PinDoc or PinRepoFile.
	Kind string
	// Identifier is the clean, relative path of the document or file.
	Identifier string
	// Note is the caller's free text about the pin.
	Note string
}

// Key is what identifies an item inside its set: pinning the same kind
// and identifier again replaces the note.
func (i WorkingSetItem) Key() WorkingSetItem {
	return WorkingSetItem{Kind: i.Kind, Identifier: i.Identifier}
}

// WorkingSet is a named, owner-scoped list of pins, in pin order.
type WorkingSet struct {
	Name  string
	Items []WorkingSetItem
}

// WorkingSetLimits bound a WorkingSets store. Each is positive.
type WorkingSetLimits struct {
	// MaxSetsPerOwner bounds how many sets one owner holds.
	MaxSetsPerOwner int
	// MaxItemsPerSet bounds how many items one set holds.
	MaxItemsPerSet int
	// MaxSetsTotal bounds how many sets the store holds over all owners.
	MaxSetsTotal int
}

// Check refuses limits a store cannot enforce: each must be positive.
// Every backend's constructor calls it.
func (l WorkingSetLimits) Check() error {
	if l.MaxSetsPerOwner <= 0 || l.MaxItemsPerSet <= 0 || l.MaxSetsTotal <= 0 {
		return errors.New("ARROWHEAD_WORKINGSET_MAX_SETS and ARROWHEAD_WORKINGSET_MAX_ITEMS must be positive")
	}
	return nil
}

// RoomForSet is the bound every backend checks before it creates a set:
// mine is how many sets the owner holds, total how many the store holds.
// ErrTooManySets or ErrSetsExhausted when one more would exceed a bound.
func (l WorkingSetLimits) RoomForSet(mine, total int) error {
	switch {
	case mine >= l.MaxSetsPerOwner:
		return ErrTooManySets
	case total >= l.MaxSetsTotal:
		return ErrSetsExhausted
	}
	return nil
}

// storedItem is an item as every backend stores it: a JSON list of
// objects with short keys, so a set of many pins stays small.
type storedItem struct {
	Kind       string `json:"k"`
	Identifier string `json:"i"`
	Note       string `json:"n,omitempty"`
}

// EncodeWorkingSetItems is the stored form of a set's items, which every
// backend writes (DecodeWorkingSetItems reads it back).
func EncodeWorkingSetItems(items []WorkingSetItem) ([]byte, error) {
	out := make([]storedItem, len(items))
	for i, it := range items {
		out[i] = storedItem{Kind: it.Kind, Identifier: it.Identifier, Note: it.Note}
	}
	return json.Marshal(out)
}

// DecodeWorkingSetItems reads the stored form back. A value that is not
// that form, or names a kind no pin has, is ErrWorkingSetDamaged.
func DecodeWorkingSetItems(raw []byte) ([]WorkingSetItem, error) {
	var in []storedItem
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("%w: it does not decode", ErrWorkingSetDamaged)
	}
	items := make([]WorkingSetItem, len(in))
	for i, it := range in {
		if it.Kind != PinDoc && it.Kind != PinRepoFile {
			return nil, fmt.Errorf("%w: an item of an unknown kind", ErrWorkingSetDamaged)
		}
		items[i] = WorkingSetItem{Kind: it.Kind, Identifier: it.Identifier, Note: it.Note}
	}
	return items, nil
}

// WorkingSets stores the context packer's working sets, keyed by the
// owner's verified identity (Principal.Subject) and a set name, both
// already validated by the core. One owner's sets are invisible to every
// other: a set held by another owner is ErrNotFound, exactly like a set
// that does not exist. Authorizing and existence-checking the items is the
// caller's job, before it pins them.
//
// Every method is atomic: a Pin that would exceed a bound changes nothing.
// Implementations are safe for concurrent use, and a second backend (a
// shared database) must pass the same contract suite
// (ports/portstest.RunWorkingSetsContract).
type WorkingSets interface {
	// Get returns the owner's set; ErrNotFound when the owner has none by
	// that name.
	Get(ctx context.Context, owner, name string) (WorkingSet, error)
	// Pin adds items to the owner's set, creating it when absent. An item
	// whose Key is already pinned keeps its place and takes the new note.
	// ErrTooManySets, ErrSetsExhausted or ErrSetFull when a bound would be
	// exceeded.
	Pin(ctx context.Context, owner, name string, items []WorkingSetItem) (WorkingSet, error)
	// Unpin removes the items with the given keys (notes are ignored; a
	// key not pinned is ignored). The set stays, possibly empty.
	// ErrNotFound when the owner has no such set.
	Unpin(ctx context.Context, owner, name string, keys []WorkingSetItem) (WorkingSet, error)
	// Delete removes the owner's set; ErrNotFound when absent.
	Delete(ctx context.Context, owner, name string) error
}

// MergePins is the pin rule every backend applies: items whose key is
// already pinned take the new note in place, new ones are appended in
// order, and the result may hold at most maxItems (ErrSetFull otherwise).
func MergePins(items, add []WorkingSetItem, maxItems int) ([]WorkingSetItem, error) {
	out := slices.Clone(items)
	for _, a := range add {
		if i := slices.IndexFunc(out, func(x WorkingSetItem) bool { return x.Key() == a.Key() }); i >= 0 {
			out[i].Note = a.Note
			continue
		}
		if len(out) >= maxItems {
			return nil, ErrSetFull
		}
		out = append(out, a)
	}
	return out, nil
}

// Unpinned returns items without those whose key is among keys.
func Unpinned(items, keys []WorkingSetItem) []WorkingSetItem {
	return slices.DeleteFunc(slices.Clone(items), func(x WorkingSetItem) bool {
		return slices.ContainsFunc(keys, func(k WorkingSetItem) bool { return k.Key() == x.Key() })
	})
}
