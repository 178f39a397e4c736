package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/arrowhead-go/arrowhead/ports"
)

// wsTotal is the counter of sets over all owners.
const wsTotal = "ws_total"

// WorkingSets is ports.WorkingSets in the shared store: every change is
// one durable transaction that checks its bounds inside it, so two
// processes pinning at once cannot overshoot them.
type WorkingSets struct {
	s      *Store
	limits ports.WorkingSetLimits
}

var _ ports.WorkingSets = (*WorkingSets)(nil)

// NewWorkingSets keeps working sets in s under limits; each limit must be
// positive.
func NewWorkingSets(s *Store, limits ports.WorkingSetLimits) (*WorkingSets, error) {
	if s == nil {
		return nil, errors.New("working sets need the embedded store (ARROWHEAD_DATA_DIR)")
	}
	if err := limits.Check(); err != nil {
		return nil, err
	}
	return &WorkingSets{s: s, limits: limits}, nil
}

// getSet reads one set inside tx; found is false when absent.
func getSet(ctx context.Context, tx *Tx, owner []byte, name string) (items []ports.WorkingSetItem, found bool, err error) {
	var raw []byte
	err = tx.QueryRowContext(ctx, "SELECT items FROM ws_set WHERE owner = ? AND name = ?", owner, name).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	items, err = ports.DecodeWorkingSetItems(raw)
	return items, err == nil, err
}

func putSet(ctx context.Context, tx *Tx, owner []byte, name string, items []ports.WorkingSetItem) error {
	raw, err := ports.EncodeWorkingSetItems(items)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, "INSERT OR REPLACE INTO ws_set (owner, name, items) VALUES (?, ?, ?)", owner, name, raw)
	return err
}

// Get implements ports.WorkingSets.
func (w *WorkingSets) Get(ctx context.Context, owner, name string) (ports.WorkingSet, error) {
	if err := w.s.carry(ctx, owner); err != nil {
		return ports.WorkingSet{}, err
	}
	var items []ports.WorkingSetItem
	err := w.s.Read(ctx, func(tx *Tx) error {
		got, found, err := getSet(ctx, tx, OwnerKey(owner), name)
		if err != nil {
			return err
		}
		if !found {
			return ports.ErrNotFound
		}
		items = got
		return nil
	})
	if err != nil {
		return ports.WorkingSet{}, err
	}
	return ports.WorkingSet{Name: name, Items: items}, nil
}

// Pin implements ports.WorkingSets.
func (w *WorkingSets) Pin(ctx context.Context, owner, name string, add []ports.WorkingSetItem) (ports.WorkingSet, error) {
	if err := w.s.carry(ctx, owner); err != nil {
		return ports.WorkingSet{}, err
	}
	var merged []ports.WorkingSetItem
	ok := OwnerKey(owner)
	err := w.s.Write(ctx, func(tx *Tx) error {
		items, exists, err := getSet(ctx, tx, ok, name)
		if err != nil {
			return err
		}
		var total int64
		if !exists {
			var mine int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM ws_set WHERE owner = ?", ok).Scan(&mine); err != nil {
				return err
			}
			if total, err = count(ctx, tx, wsTotal); err != nil {
				return err
			}
			if err := w.limits.RoomForSet(mine, int(total)); err != nil {
				return err
			}
		}
		if merged, err = ports.MergePins(items, add, w.limits.MaxItemsPerSet); err != nil {
			return err
		}
		if err := putSet(ctx, tx, ok, name, merged); err != nil {
			return err
		}
		if !exists {
			return setCount(ctx, tx, wsTotal, total+1)
		}
		return nil
	})
	if err != nil {
		return ports.WorkingSet{}, err
	}
	return ports.WorkingSet{Name: name, Items: merged}, nil
}

// Unpin implements ports.WorkingSets. It only shrinks a set, so it runs
// on a full disk too (Store.Delete).
func (w *WorkingSets) Unpin(ctx context.Context, owner, name string, keys []ports.WorkingSetItem) (ports.WorkingSet, error) {
	if err := w.s.carry(ctx, owner); err != nil {
		return ports.WorkingSet{}, err
	}
	var kept []ports.WorkingSetItem
	ok := OwnerKey(owner)
	err := w.s.Delete(ctx, func(tx *Tx) error {
		items, found, err := getSet(ctx, tx, ok, name)
		if err != nil {
			return err
		}
		if !found {
			return ports.ErrNotFound
		}
		kept = ports.Unpinned(items, keys)
		return putSet(ctx, tx, ok, name, kept)
	})
	if err != nil {
		return ports.WorkingSet{}, err
	}
	return ports.WorkingSet{Name: name, Items: kept}, nil
}

// Delete implements ports.WorkingSets. It runs on a full disk too
// (Store.Delete).
func (w *WorkingSets) Delete(ctx context.Context, owner, name string) error {
	if err := w.s.carry(ctx, owner); err != nil {
		return err
	}
	return w.s.Delete(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM ws_set WHERE owner = ? AND name = ?", OwnerKey(owner), name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ports.ErrNotFound
		}
		total, err := count(ctx, tx, wsTotal)
		if err != nil {
			return err
		}
		return setCount(ctx, tx, wsTotal, total-1)
	})
}
