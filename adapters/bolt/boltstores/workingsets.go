package boltstores

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/ports"
)

// WorkingSetsNamespace is the embedded store namespace the working sets
// live in.
const WorkingSetsNamespace = "workingsets"

// Layout of the namespace:
//
//	"total"    the number of sets over all owners (u64, sealed)
//	"owners"/  a bucket per owner, keyed by SHA-256 of the subject (so
//	           a subject of any length or content is a fixed-size key
//	           and never appears in the file), holding
//	           set name -> JSON list of items (sealed)
//
// Every value is sealed (bolt.Seal), so a damaged value is an error
// instead of a different set.
var (
	wsTotalKey  = []byte("total")
	wsOwnersKey = []byte("owners")
)

// WorkingSets is ports.WorkingSets in the embedded store: every change is
// one fsynced transaction, so bounds are checked and applied atomically
// and an acknowledged pin survives a restart.
type WorkingSets struct {
	ns     *bolt.Namespace
	limits ports.WorkingSetLimits
}

// NewWorkingSets keeps working sets in ns under limits; each limit must be
// positive.
func NewWorkingSets(ns *bolt.Namespace, limits ports.WorkingSetLimits) (*WorkingSets, error) {
	if ns == nil {
		return nil, errors.New("working sets need the embedded store (ARROWHEAD_DATA_DIR)")
	}
	if err := limits.Check(); err != nil {
		return nil, err
	}
	return &WorkingSets{ns: ns, limits: limits}, nil
}

// sealKey binds a sealed set to its owner and name, so a value moved to
// another key fails its check.
func sealKey(owner, name string) []byte { return append(ownerKey(owner), name...) }

// encodeItems is the stored form of items, sealed to key.
func encodeItems(key []byte, items []ports.WorkingSetItem) ([]byte, error) {
	b, err := ports.EncodeWorkingSetItems(items)
	if err != nil {
		return nil, err
	}
	return bolt.Seal(key, b), nil
}

func decodeItems(key, sealed []byte) ([]ports.WorkingSetItem, error) {
	b, err := bolt.Unseal(key, sealed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ports.ErrWorkingSetDamaged, err)
	}
	return ports.DecodeWorkingSetItems(b)
}

func readTotal(b *bbolt.Bucket) (uint64, error) {
	v := b.Get(wsTotalKey)
	if v == nil {
		return 0, nil
	}
	raw, err := bolt.Unseal(wsTotalKey, v)
	if err != nil || len(raw) != 8 {
		return 0, fmt.Errorf("%w: the set count", ports.ErrWorkingSetDamaged)
	}
	return binary.LittleEndian.Uint64(raw), nil
}

func writeTotal(b *bbolt.Bucket, n uint64) error {
	return b.Put(wsTotalKey, bolt.Seal(wsTotalKey, binary.LittleEndian.AppendUint64(nil, n)))
}

// get reads one set inside a transaction; found is false when absent.
func get(b *bbolt.Bucket, owner, name string) (items []ports.WorkingSetItem, found bool, err error) {
	owners := b.Bucket(wsOwnersKey)
	if owners == nil {
		return nil, false, nil
	}
	ob := owners.Bucket(ownerKey(owner))
	if ob == nil {
		return nil, false, nil
	}
	v := ob.Get([]byte(name))
	if v == nil {
		return nil, false, nil
	}
	items, err = decodeItems(sealKey(owner, name), v)
	return items, err == nil, err
}

// Get implements ports.WorkingSets.
func (w *WorkingSets) Get(ctx context.Context, owner, name string) (ports.WorkingSet, error) {
	var items []ports.WorkingSetItem
	err := w.ns.View(ctx, func(b *bbolt.Bucket) error {
		got, found, err := get(b, owner, name)
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
	var merged []ports.WorkingSetItem
	err := w.ns.Update(ctx, func(b *bbolt.Bucket) error {
		owners, err := b.CreateBucketIfNotExists(wsOwnersKey)
		if err != nil {
			return err
		}
		ob := owners.Bucket(ownerKey(owner))
		items, exists, err := get(b, owner, name)
		if err != nil {
			return err
		}
		var total uint64
		if !exists {
			mine := 0
			if ob != nil {
				mine = countKeys(ob)
			}
			if total, err = readTotal(b); err != nil {
				return err
			}
			if err := w.limits.RoomForSet(mine, int(total)); err != nil {
				return err
			}
		}
		if merged, err = ports.MergePins(items, add, w.limits.MaxItemsPerSet); err != nil {
			return err
		}
		if ob == nil {
			if ob, err = owners.CreateBucket(ownerKey(owner)); err != nil {
				return err
			}
		}
		v, err := encodeItems(sealKey(owner, name), merged)
		if err != nil {
			return err
		}
		if err := ob.Put([]byte(name), v); err != nil {
			return err
		}
		if !exists {
			return writeTotal(b, total+1)
		}
		return nil
	})
	if err != nil {
		return ports.WorkingSet{}, err
	}
	return ports.WorkingSet{Name: name, Items: merged}, nil
}

// Unpin implements ports.WorkingSets.
func (w *WorkingSets) Unpin(ctx context.Context, owner, name string, keys []ports.WorkingSetItem) (ports.WorkingSet, error) {
	var kept []ports.WorkingSetItem
	err := w.ns.Update(ctx, func(b *bbolt.Bucket) error {
		items, found, err := get(b, owner, name)
		if err != nil {
			return err
		}
		if !found {
			return ports.ErrNotFound
		}
		kept = ports.Unpinned(items, keys)
		v, err := encodeItems(sealKey(owner, name), kept)
		if err != nil {
			return err
		}
		return b.Bucket(wsOwnersKey).Bucket(ownerKey(owner)).Put([]byte(name), v)
	})
	if err != nil {
		return ports.WorkingSet{}, err
	}
	return ports.WorkingSet{Name: name, Items: kept}, nil
}

// Delete implements ports.WorkingSets.
func (w *WorkingSets) Delete(ctx context.Context, owner, name string) error {
	return w.ns.Update(ctx, func(b *bbolt.Bucket) error {
		if _, found, err := get(b, owner, name); err != nil {
			return err
		} else if !found {
			return ports.ErrNotFound
		}
		owners := b.Bucket(wsOwnersKey)
		ob := owners.Bucket(ownerKey(owner))
		if err := ob.Delete([]byte(name)); err != nil {
			return err
		}
		if countKeys(ob) == 0 {
			if err := owners.DeleteBucket(ownerKey(owner)); err != nil {
				return err
			}
		}
		total, err := readTotal(b)
		if err != nil {
			return err
		}
		if total == 0 {
			return fmt.Errorf("%w: the set count", ports.ErrWorkingSetDamaged)
		}
		return writeTotal(b, total-1)
	})
}
