package boltstores

import (
	"context"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Dumps carry the state of the bbolt store out to the store that replaces
// it (adapters/sqlite imports them once, on first start). Owners appear as
// the SHA-256 of their identity, as they are stored: the identity itself
// is not in the file.

// MemoryDump is one owner's memories and kv entries.
type MemoryDump struct {
	Owner   []byte // SHA-256 of the owner's identity
	Records []ports.MemoryRecord
	KV      []ports.KVEntry // expired entries included: the importer decides
}

// Dump calls fn with each owner's memories and kv entries, all read in one
// consistent snapshot.
func (m *MemoryStore) Dump(ctx context.Context, fn func(MemoryDump) error) error {
	return m.ns.View(ctx, func(root *bbolt.Bucket) error {
		return root.ForEachBucket(func(owner []byte) error {
			ob := root.Bucket(owner)
			d := MemoryDump{Owner: append([]byte(nil), owner...)}
			if spaces := ob.Bucket(memNSKey); spaces != nil {
				err := spaces.ForEachBucket(func(ns []byte) error {
					recs := nestedBucket(spaces, ns, memRecKey)
					if recs == nil {
						return nil
					}
					return recs.ForEach(func(k, _ []byte) error {
						var r memRecord
						if _, err := getSealed(recs, k, &r); err != nil {
							return err
						}
						d.Records = append(d.Records, r.port(string(ns)))
						return nil
					})
				})
				if err != nil {
					return err
				}
			}
			if kb := ob.Bucket(memKVKey); kb != nil {
				err := kb.ForEach(func(k, _ []byte) error {
					var r kvRecord
					if _, err := getSealed(kb, k, &r); err != nil {
						return err
					}
					d.KV = append(d.KV, ports.KVEntry{Key: string(k), Value: r.Value, ExpiresAt: r.ExpiresAt, UpdatedAt: r.UpdatedAt, Provenance: fromProv(r.Provenance)})
					return nil
				})
				if err != nil {
					return err
				}
			}
			return fn(d)
		})
	})
}

// WorkingSetDump is one owner's working sets.
type WorkingSetDump struct {
	Owner []byte // SHA-256 of the owner's identity
	Sets  []ports.WorkingSet
}

// Dump calls fn with each owner's working sets, all read in one
// consistent snapshot.
func (w *WorkingSets) Dump(ctx context.Context, fn func(WorkingSetDump) error) error {
	return w.ns.View(ctx, func(b *bbolt.Bucket) error {
		owners := b.Bucket(wsOwnersKey)
		if owners == nil {
			return nil
		}
		return owners.ForEachBucket(func(owner []byte) error {
			ob := owners.Bucket(owner)
			d := WorkingSetDump{Owner: append([]byte(nil), owner...)}
			err := ob.ForEach(func(name, v []byte) error {
				if v == nil {
					return fmt.Errorf("%w: a nested bucket", ports.ErrWorkingSetDamaged)
				}
				items, err := decodeItems(append(append([]byte(nil), owner...), name...), v)
				if err != nil {
					return err
				}
				d.Sets = append(d.Sets, ports.WorkingSet{Name: string(name), Items: items})
				return nil
			})
			if err != nil {
				return err
			}
			return fn(d)
		})
	})
}
