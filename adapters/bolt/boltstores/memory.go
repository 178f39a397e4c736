package boltstores

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/ports"
)

// MemoryNamespace is the embedded store namespace of the memory backend.
const MemoryNamespace = "memory"

// The embedded memory backend keeps memories and kv entries in its
// namespace of the embedded store (adapters/bolt):
//
//	sha256(owner)/          one bucket per owner: the identity never shapes
//	                        a key, whatever its characters
//	  "usage"               bytes counted against the quota (u64)
//	  "ns"/<namespace>/     one bucket per memory namespace
//	    "rec"/<id>          the record, JSON, sealed
//	    "hash"/<sha256>     the id holding that content (dedup)
//	    "count"             how many records "rec" holds, uint64
//	  "kv"/<key>            the entry, JSON, sealed
//	  "kvcount"             how many entries "kv" holds, uint64
//
// Every write is one group-committed transaction (Namespace.Batch): it is
// acknowledged only after its commit is fsynced, and the bounds are
// checked inside it, so concurrent writers cannot overshoot them.
var (
	memUsageKey = []byte("usage")
	memNSKey    = []byte("ns")
	memRecKey   = []byte("rec")
	memHashKey  = []byte("hash")
	memCountKey = []byte("count")
	kvCountKey  = []byte("kvcount")
	memKVKey    = []byte("kv")
)

// MemoryStore is the embedded ports.MemoryBackend.
type MemoryStore struct {
	ns *bolt.Namespace
}

// NewMemoryStore serves memories from ns (claimed as MemoryNamespace).
func NewMemoryStore(ns *bolt.Namespace) *MemoryStore { return &MemoryStore{ns: ns} }

var _ ports.MemoryBackend = (*MemoryStore)(nil)

type memProvenance struct {
	Tool   string    `json:"tool"`
	Caller string    `json:"caller"`
	At     time.Time `json:"at"`
}

type memRecord struct {
	ID         string          `json:"id"`
	Content    string          `json:"content"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	Hash       string          `json:"hash"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
	Provenance memProvenance   `json:"provenance"`
}

type kvRecord struct {
	Value      string        `json:"value"`
	ExpiresAt  time.Time     `json:"expires_at,omitempty"`
	UpdatedAt  time.Time     `json:"updated_at"`
	Provenance memProvenance `json:"provenance"`
}

func ownerKey(owner string) []byte {
	h := sha256.Sum256([]byte(owner))
	return h[:]
}

func toProv(p ports.Provenance) memProvenance { return memProvenance{p.Tool, p.Caller, p.At.UTC()} }
func fromProv(p memProvenance) ports.Provenance {
	return ports.Provenance{Tool: p.Tool, Caller: p.Caller, At: p.At}
}

func (r memRecord) port(namespace string) ports.MemoryRecord {
	var md []byte
	if len(r.Metadata) > 0 {
		md = append([]byte(nil), r.Metadata...)
	}
	return ports.MemoryRecord{Namespace: namespace, ID: r.ID, Content: r.Content, Metadata: md, Hash: r.Hash,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Provenance: fromProv(r.Provenance)}
}

func putSealed(b *bbolt.Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, bolt.Seal(key, raw))
}

func getSealed(b *bbolt.Bucket, key []byte, v any) (bool, error) {
	sealed := b.Get(key)
	if sealed == nil {
		return false, nil
	}
	raw, err := bolt.Unseal(key, sealed)
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, errors.Join(bolt.ErrCorrupt, errors.New("a memory record does not decode"))
	}
	return true, nil
}

func usage(ob *bbolt.Bucket) int64 {
	if v := ob.Get(memUsageKey); len(v) == 8 {
		return int64(binary.LittleEndian.Uint64(v))
	}
	return 0
}

func setUsage(ob *bbolt.Bucket, n int64) error {
	if n < 0 {
		n = 0
	}
	return ob.Put(memUsageKey, binary.LittleEndian.AppendUint64(nil, uint64(n)))
}

// storedCount is how many keys b holds, as kept under countKey in holder.
// The count lives beside the keys so a bound (entries per namespace, kv
// keys) is checked without walking every key; a bucket written before the
// count existed is counted once.
func storedCount(holder *bbolt.Bucket, countKey []byte, b *bbolt.Bucket) int {
	if v := holder.Get(countKey); len(v) == 8 {
		return int(binary.LittleEndian.Uint64(v))
	}
	return countKeys(b)
}

func setStoredCount(holder *bbolt.Bucket, countKey []byte, n int) error {
	return holder.Put(countKey, binary.LittleEndian.AppendUint64(nil, uint64(max(n, 0))))
}

// Store implements ports.MemoryBackend.
func (m *MemoryStore) Store(ctx context.Context, owner string, w ports.MemoryWrite, lim ports.MemoryLimits) (ports.MemoryRecord, bool, error) {
	var out ports.MemoryRecord
	var created bool
	err := m.ns.Batch(ctx, func(root *bbolt.Bucket) error {
		out, created = ports.MemoryRecord{}, false // Batch may rerun fn
		ob, err := root.CreateBucketIfNotExists(ownerKey(owner))
		if err != nil {
			return err
		}
		nsAll, err := ob.CreateBucketIfNotExists(memNSKey)
		if err != nil {
			return err
		}
		nb := nsAll.Bucket([]byte(w.Namespace))
		if nb == nil {
			if w.ID != "" {
				return ports.ErrNotFound
			}
			if lim.MaxNamespaces > 0 && countKeys(nsAll) >= lim.MaxNamespaces {
				return &ports.MemoryLimitError{Var: "ARROWHEAD_MEMORY_MAX_NAMESPACES"}
			}
			if nb, err = nsAll.CreateBucket([]byte(w.Namespace)); err != nil {
				return err
			}
		}
		recs, err := nb.CreateBucketIfNotExists(memRecKey)
		if err != nil {
			return err
		}
		hashes, err := nb.CreateBucketIfNotExists(memHashKey)
		if err != nil {
			return err
		}
		if id := hashes.Get([]byte(w.Hash)); id != nil && w.ID == "" {
			var existing memRecord
			ok, err := getSealed(recs, id, &existing)
			if err != nil {
				return err
			}
			if ok {
				out = existing.port(w.Namespace)
				return nil
			}
		}
		now := w.Provenance.At.UTC()
		rec := memRecord{ID: w.ID, Content: w.Content, Metadata: w.Metadata, Hash: w.Hash, CreatedAt: now, UpdatedAt: now, Provenance: toProv(w.Provenance)}
		used := usage(ob)
		if w.ID != "" {
			var old memRecord
			ok, err := getSealed(recs, []byte(w.ID), &old)
			if err != nil {
				return err
			}
			if !ok {
				return ports.ErrNotFound
			}
			rec.CreatedAt = old.CreatedAt
			used -= int64(len(old.Content) + len(old.Metadata))
			if string(hashes.Get([]byte(old.Hash))) == old.ID && old.Hash != rec.Hash {
				if err := hashes.Delete([]byte(old.Hash)); err != nil {
					return err
				}
			}
		} else {
			n := storedCount(nb, memCountKey, recs)
			if lim.MaxEntriesPerNamespace > 0 && n >= lim.MaxEntriesPerNamespace {
				return &ports.MemoryLimitError{Var: "ARROWHEAD_MEMORY_MAX_ENTRIES_PER_NAMESPACE"}
			}
			if err := setStoredCount(nb, memCountKey, n+1); err != nil {
				return err
			}
			rec.ID = newMemoryID(w)
			created = true
		}
		used += int64(len(rec.Content) + len(rec.Metadata))
		if lim.QuotaBytes > 0 && used > int64(lim.QuotaBytes) {
			return &ports.MemoryLimitError{Var: "ARROWHEAD_MEMORY_QUOTA_BYTES"}
		}
		if err := putSealed(recs, []byte(rec.ID), rec); err != nil {
			return err
		}
		if err := hashes.Put([]byte(rec.Hash), []byte(rec.ID)); err != nil {
			return err
		}
		if err := setUsage(ob, used); err != nil {
			return err
		}
		out = rec.port(w.Namespace)
		return nil
	})
	if err != nil {
		return ports.MemoryRecord{}, false, err
	}
	return out, created, nil
}

// newMemoryID is the id of a new record: the write carries a random
// NewID the core drew (Batch may rerun the transaction, so nothing random
// is drawn inside it).
func newMemoryID(w ports.MemoryWrite) string { return w.NewID }

// readNamespace returns the records of namespace, oldest first.
func (m *MemoryStore) readNamespace(ctx context.Context, owner, namespace string) ([]ports.MemoryRecord, error) {
	var out []ports.MemoryRecord
	err := m.ns.View(ctx, func(root *bbolt.Bucket) error {
		recs := nestedBucket(root, ownerKey(owner), memNSKey, []byte(namespace), memRecKey)
		if recs == nil {
			return nil
		}
		return recs.ForEach(func(k, _ []byte) error {
			var r memRecord
			if _, err := getSealed(recs, k, &r); err != nil {
				return err
			}
			out = append(out, r.port(namespace))
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, err
}

// countKeys counts a bucket's keys (nested buckets included) with a
// cursor: Bucket.Stats does not see the writes of the open transaction.
func countKeys(b *bbolt.Bucket) int {
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}

func nestedBucket(b *bbolt.Bucket, path ...[]byte) *bbolt.Bucket {
	for _, p := range path {
		if b = b.Bucket(p); b == nil {
			return nil
		}
	}
	return b
}

// List implements ports.MemoryBackend.
func (m *MemoryStore) List(ctx context.Context, owner, namespace string, limit int) ([]ports.MemoryRecord, bool, error) {
	all, err := m.readNamespace(ctx, owner, namespace)
	if err != nil {
		return nil, false, err
	}
	if limit > 0 && len(all) > limit {
		return all[:limit], true, nil
	}
	return all, false, nil
}

// Search implements ports.MemoryBackend: keyword recall (the share of the
// query's words a memory contains), whatever embedding is given, and it
// says so.
func (m *MemoryStore) Search(ctx context.Context, owner, namespace, query string, _ []float32, k int) ([]ports.MemoryHit, ports.Recall, error) {
	all, err := m.readNamespace(ctx, owner, namespace)
	if err != nil {
		return nil, ports.RecallKeyword, err
	}
	return ports.KeywordRank(all, query, k), ports.RecallKeyword, nil
}

// Delete implements ports.MemoryBackend.
func (m *MemoryStore) Delete(ctx context.Context, owner, namespace, id string) error {
	return m.ns.Batch(ctx, func(root *bbolt.Bucket) error {
		ob := root.Bucket(ownerKey(owner))
		nb := nestedBucket(root, ownerKey(owner), memNSKey, []byte(namespace))
		if ob == nil || nb == nil || nb.Bucket(memRecKey) == nil {
			return ports.ErrNotFound
		}
		recs, hashes := nb.Bucket(memRecKey), nb.Bucket(memHashKey)
		var r memRecord
		ok, err := getSealed(recs, []byte(id), &r)
		if err != nil {
			return err
		}
		if !ok {
			return ports.ErrNotFound
		}
		left := storedCount(nb, memCountKey, recs) - 1
		if err := recs.Delete([]byte(id)); err != nil {
			return err
		}
		if hashes != nil && string(hashes.Get([]byte(r.Hash))) == id {
			if err := hashes.Delete([]byte(r.Hash)); err != nil {
				return err
			}
		}
		// The emptiness test reads the records, not the count, so a count
		// that ever drifted could not drop a namespace still holding some.
		if k, _ := recs.Cursor().First(); k == nil {
			if err := ob.Bucket(memNSKey).DeleteBucket([]byte(namespace)); err != nil {
				return err
			}
		} else if err := setStoredCount(nb, memCountKey, max(left, 1)); err != nil {
			return err
		}
		return setUsage(ob, usage(ob)-int64(len(r.Content)+len(r.Metadata)))
	})
}

// KVSet implements ports.MemoryBackend. Expired keys are purged first, so
// they never count against ARROWHEAD_KV_MAX_KEYS.
func (m *MemoryStore) KVSet(ctx context.Context, owner string, e ports.KVEntry, lim ports.MemoryLimits) error {
	return m.ns.Batch(ctx, func(root *bbolt.Bucket) error {
		ob, err := root.CreateBucketIfNotExists(ownerKey(owner))
		if err != nil {
			return err
		}
		kb, err := ob.CreateBucketIfNotExists(memKVKey)
		if err != nil {
			return err
		}
		now := e.UpdatedAt
		key := []byte(e.Key)
		if kb.Get(key) == nil {
			n := storedCount(ob, kvCountKey, kb)
			if lim.MaxKeys > 0 && n >= lim.MaxKeys {
				purged, err := purgeExpired(kb, now)
				if err != nil {
					return err
				}
				if n -= purged; n >= lim.MaxKeys {
					return &ports.MemoryLimitError{Var: "ARROWHEAD_KV_MAX_KEYS"}
				}
			}
			if err := setStoredCount(ob, kvCountKey, n+1); err != nil {
				return err
			}
		}
		return putSealed(kb, key, kvRecord{Value: e.Value, ExpiresAt: e.ExpiresAt.UTC(), UpdatedAt: now.UTC(), Provenance: toProv(e.Provenance)})
	})
}

// purgeExpired deletes kb's expired entries and says how many.
func purgeExpired(kb *bbolt.Bucket, now time.Time) (int, error) {
	var dead [][]byte
	err := kb.ForEach(func(k, _ []byte) error {
		var r kvRecord
		if _, err := getSealed(kb, k, &r); err != nil {
			return err
		}
		if !r.ExpiresAt.IsZero() && !now.Before(r.ExpiresAt) {
			dead = append(dead, append([]byte(nil), k...))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range dead {
		if err := kb.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(dead), nil
}

// KVGet implements ports.MemoryBackend.
func (m *MemoryStore) KVGet(ctx context.Context, owner, key string, now time.Time) (ports.KVEntry, error) {
	var out ports.KVEntry
	err := m.ns.View(ctx, func(root *bbolt.Bucket) error {
		kb := nestedBucket(root, ownerKey(owner), memKVKey)
		if kb == nil {
			return ports.ErrNotFound
		}
		var r kvRecord
		ok, err := getSealed(kb, []byte(key), &r)
		if err != nil {
			return err
		}
		if !ok || (!r.ExpiresAt.IsZero() && !now.Before(r.ExpiresAt)) {
			return ports.ErrNotFound
		}
		out = ports.KVEntry{Key: key, Value: r.Value, ExpiresAt: r.ExpiresAt, UpdatedAt: r.UpdatedAt, Provenance: fromProv(r.Provenance)}
		return nil
	})
	return out, err
}

// KVDelete implements ports.MemoryBackend.
func (m *MemoryStore) KVDelete(ctx context.Context, owner, key string) error {
	return m.ns.Batch(ctx, func(root *bbolt.Bucket) error {
		ob := root.Bucket(ownerKey(owner))
		kb := nestedBucket(root, ownerKey(owner), memKVKey)
		if kb == nil || kb.Get([]byte(key)) == nil {
			return ports.ErrNotFound
		}
		n := storedCount(ob, kvCountKey, kb)
		if err := kb.Delete([]byte(key)); err != nil {
			return err
		}
		return setStoredCount(ob, kvCountKey, n-1)
	})
}
