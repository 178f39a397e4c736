package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// MemoryStore is ports.MemoryBackend in the shared store: memories and kv
// entries of every process on the data directory. Every write is one
// group-committed call (Store.Write) that checks its bounds inside its
// transaction, so concurrent writers, in this process or another, cannot
// overshoot them.
type MemoryStore struct{ s *Store }

// NewMemoryStore serves memories from s.
func NewMemoryStore(s *Store) *MemoryStore { return &MemoryStore{s: s} }

var _ ports.MemoryBackend = (*MemoryStore)(nil)

// OwnerKey is the column value that stands for an owner.
func OwnerKey(owner string) []byte {
	h := sha256.Sum256([]byte(owner))
	return h[:]
}

// nanos and fromNanos store times as Unix nanoseconds, 0 for none.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

const recordColumns = "id, content, metadata, hash, created_at, updated_at, tool, caller, at"

type scanner interface{ Scan(dest ...any) error }

func scanRecord(row scanner, namespace string) (ports.MemoryRecord, error) {
	var r ports.MemoryRecord
	var content, md []byte
	var created, updated, at int64
	if err := row.Scan(&r.ID, &content, &md, &r.Hash, &created, &updated, &r.Provenance.Tool, &r.Provenance.Caller, &at); err != nil {
		return r, err
	}
	r.Namespace, r.Content = namespace, string(content)
	if md != nil {
		r.Metadata = md
	}
	r.CreatedAt, r.UpdatedAt, r.Provenance.At = fromNanos(created), fromNanos(updated), fromNanos(at)
	return r, nil
}

// Store implements ports.MemoryBackend.
func (m *MemoryStore) Store(ctx context.Context, owner string, w ports.MemoryWrite, lim ports.MemoryLimits) (ports.MemoryRecord, bool, error) {
	if err := m.s.carry(ctx, owner); err != nil {
		return ports.MemoryRecord{}, false, err
	}
	var out ports.MemoryRecord
	var created bool
	ok := OwnerKey(owner)
	err := m.s.Write(ctx, func(tx *Tx) error {
		out, created = ports.MemoryRecord{}, false // Write may rerun fn
		var n int64
		err := tx.QueryRowContext(ctx, "SELECT count FROM mem_ns WHERE owner = ? AND ns = ?", ok, w.Namespace).Scan(&n)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if w.ID != "" {
				return ports.ErrNotFound
			}
			if lim.MaxNamespaces > 0 {
				var spaces int
				if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM mem_ns WHERE owner = ?", ok).Scan(&spaces); err != nil {
					return err
				}
				if spaces >= lim.MaxNamespaces {
					return &ports.MemoryLimitError{Var: "ARROWHEAD_MEMORY_MAX_NAMESPACES"}
				}
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO mem_ns (owner, ns, count) VALUES (?, ?, 0)", ok, w.Namespace); err != nil {
				return err
			}
		case err != nil:
			return err
		case w.ID == "":
			existing, err := scanRecord(tx.QueryRowContext(ctx, "SELECT "+recordColumns+
				" FROM mem_record WHERE owner = ? AND ns = ? AND id = (SELECT id FROM mem_hash WHERE owner = ? AND ns = ? AND hash = ?)",
				ok, w.Namespace, ok, w.Namespace, w.Hash), w.Namespace)
			if err == nil {
				out = existing
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		var used int64
		if err := tx.QueryRowContext(ctx, "SELECT used FROM mem_owner WHERE owner = ?", ok).Scan(&used); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		now := w.Provenance.At.UTC()
		rec := ports.MemoryRecord{Namespace: w.Namespace, ID: w.ID, Content: w.Content, Metadata: w.Metadata, Hash: w.Hash,
			CreatedAt: now, UpdatedAt: now, Provenance: ports.Provenance{Tool: w.Provenance.Tool, Caller: w.Provenance.Caller, At: now}}
		if w.ID != "" {
			old, err := scanRecord(tx.QueryRowContext(ctx, "SELECT "+recordColumns+" FROM mem_record WHERE owner = ? AND ns = ? AND id = ?",
				ok, w.Namespace, w.ID), w.Namespace)
			if errors.Is(err, sql.ErrNoRows) {
				return ports.ErrNotFound
			} else if err != nil {
				return err
			}
			rec.CreatedAt = old.CreatedAt
			used -= int64(old.Size())
			if old.Hash != rec.Hash {
				if _, err := tx.ExecContext(ctx, "DELETE FROM mem_hash WHERE owner = ? AND ns = ? AND hash = ? AND id = ?",
					ok, w.Namespace, old.Hash, old.ID); err != nil {
					return err
				}
			}
		} else {
			if lim.MaxEntriesPerNamespace > 0 && n >= int64(lim.MaxEntriesPerNamespace) {
				return &ports.MemoryLimitError{Var: "ARROWHEAD_MEMORY_MAX_ENTRIES_PER_NAMESPACE"}
			}
			if _, err := tx.ExecContext(ctx, "UPDATE mem_ns SET count = ? WHERE owner = ? AND ns = ?", n+1, ok, w.Namespace); err != nil {
				return err
			}
			rec.ID = w.NewID // drawn by the core: a rerun never changes it
			created = true
		}
		used += int64(rec.Size())
		if lim.QuotaBytes > 0 && used > int64(lim.QuotaBytes) {
			return &ports.MemoryLimitError{Var: "ARROWHEAD_MEMORY_QUOTA_BYTES"}
		}
		var md any // NULL, not an empty blob, for a record without metadata
		if len(rec.Metadata) > 0 {
			md = rec.Metadata
		}
		if _, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO mem_record ("+recordColumns+", owner, ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			rec.ID, []byte(rec.Content), md, rec.Hash, nanos(rec.CreatedAt), nanos(rec.UpdatedAt),
			rec.Provenance.Tool, rec.Provenance.Caller, nanos(rec.Provenance.At), ok, w.Namespace); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO mem_hash (owner, ns, hash, id) VALUES (?, ?, ?, ?)", ok, w.Namespace, rec.Hash, rec.ID); err != nil {
			return err
		}
		if err := setUsed(ctx, tx, ok, used); err != nil {
			return err
		}
		out = rec
		return nil
	})
	if err != nil {
		return ports.MemoryRecord{}, false, err
	}
	return out, created, nil
}

func setUsed(ctx context.Context, tx *Tx, owner []byte, used int64) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO mem_owner (owner, used) VALUES (?, ?) ON CONFLICT (owner) DO UPDATE SET used = excluded.used", owner, max(used, 0))
	return err
}

// readNamespace returns the records of namespace, oldest first (limit 0:
// all of them).
func (m *MemoryStore) readNamespace(ctx context.Context, owner, namespace string, limit int) ([]ports.MemoryRecord, error) {
	if err := m.s.carry(ctx, owner); err != nil {
		return nil, err
	}
	var out []ports.MemoryRecord
	if limit <= 0 {
		limit = -1
	}
	err := m.s.Read(ctx, func(tx *Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, "SELECT "+recordColumns+" FROM mem_record WHERE owner = ? AND ns = ? ORDER BY created_at, id LIMIT ?",
			OwnerKey(owner), namespace, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanRecord(rows, namespace)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// List implements ports.MemoryBackend.
func (m *MemoryStore) List(ctx context.Context, owner, namespace string, limit int) ([]ports.MemoryRecord, bool, error) {
	ask := limit
	if limit > 0 {
		ask = limit + 1 // one more says whether the list was cut
	}
	all, err := m.readNamespace(ctx, owner, namespace, ask)
	if err != nil {
		return nil, false, err
	}
	if limit > 0 && len(all) > limit {
		return all[:limit], true, nil
	}
	return all, false, nil
}

// Search implements ports.MemoryBackend: keyword recall, ranked as the
// other embedded backends rank it (ports.KeywordRank), whatever embedding
// is given, and it says so.
func (m *MemoryStore) Search(ctx context.Context, owner, namespace, query string, _ []float32, k int) ([]ports.MemoryHit, ports.Recall, error) {
	all, err := m.readNamespace(ctx, owner, namespace, 0)
	if err != nil {
		return nil, ports.RecallKeyword, err
	}
	return ports.KeywordRank(all, query, k), ports.RecallKeyword, nil
}

// Delete implements ports.MemoryBackend. It runs on a full disk too
// (Store.Delete), so a caller can free space.
func (m *MemoryStore) Delete(ctx context.Context, owner, namespace, id string) error {
	if err := m.s.carry(ctx, owner); err != nil {
		return err
	}
	ok := OwnerKey(owner)
	return m.s.Delete(ctx, func(tx *Tx) error {
		r, err := scanRecord(tx.QueryRowContext(ctx, "SELECT "+recordColumns+" FROM mem_record WHERE owner = ? AND ns = ? AND id = ?",
			ok, namespace, id), namespace)
		if errors.Is(err, sql.ErrNoRows) {
			return ports.ErrNotFound
		} else if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM mem_record WHERE owner = ? AND ns = ? AND id = ?", ok, namespace, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM mem_hash WHERE owner = ? AND ns = ? AND hash = ? AND id = ?", ok, namespace, r.Hash, id); err != nil {
			return err
		}
		// The emptiness test reads the records, not the count, so a count
		// that ever drifted could not drop a namespace still holding some.
		var left int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM mem_record WHERE owner = ? AND ns = ? LIMIT 1)", ok, namespace).Scan(&left); err != nil {
			return err
		}
		if left == 0 {
			_, err = tx.ExecContext(ctx, "DELETE FROM mem_ns WHERE owner = ? AND ns = ?", ok, namespace)
		} else {
			_, err = tx.ExecContext(ctx, "UPDATE mem_ns SET count = max(count - 1, 1) WHERE owner = ? AND ns = ?", ok, namespace)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE mem_owner SET used = max(used - ?, 0) WHERE owner = ?", r.Size(), ok)
		return err
	})
}

// KVSet implements ports.MemoryBackend. Expired keys are purged first, so
// they never count against ARROWHEAD_KV_MAX_KEYS.
func (m *MemoryStore) KVSet(ctx context.Context, owner string, e ports.KVEntry, lim ports.MemoryLimits) error {
	if err := m.s.carry(ctx, owner); err != nil {
		return err
	}
	ok := OwnerKey(owner)
	return m.s.Write(ctx, func(tx *Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM kv WHERE owner = ? AND key = ?", ok, e.Key).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			var n int64
			if err := tx.QueryRowContext(ctx, "SELECT kv_count FROM mem_owner WHERE owner = ?", ok).Scan(&n); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if lim.MaxKeys > 0 && n >= int64(lim.MaxKeys) {
				res, err := tx.ExecContext(ctx, "DELETE FROM kv WHERE owner = ? AND expires_at != 0 AND expires_at <= ?", ok, nanos(e.UpdatedAt))
				if err != nil {
					return err
				}
				purged, _ := res.RowsAffected()
				if n -= purged; n >= int64(lim.MaxKeys) {
					return &ports.MemoryLimitError{Var: "ARROWHEAD_KV_MAX_KEYS"}
				}
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO mem_owner (owner, kv_count) VALUES (?, ?) ON CONFLICT (owner) DO UPDATE SET kv_count = excluded.kv_count", ok, n+1); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "INSERT OR REPLACE INTO kv (owner, key, value, expires_at, updated_at, tool, caller, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			ok, e.Key, []byte(e.Value), nanos(e.ExpiresAt), nanos(e.UpdatedAt), e.Provenance.Tool, e.Provenance.Caller, nanos(e.Provenance.At))
		return err
	})
}

// KVGet implements ports.MemoryBackend.
func (m *MemoryStore) KVGet(ctx context.Context, owner, key string, now time.Time) (ports.KVEntry, error) {
	if err := m.s.carry(ctx, owner); err != nil {
		return ports.KVEntry{}, err
	}
	var out ports.KVEntry
	err := m.s.Read(ctx, func(tx *Tx) error {
		var value []byte
		var expires, updated, at int64
		out = ports.KVEntry{Key: key}
		err := tx.QueryRowContext(ctx, "SELECT value, expires_at, updated_at, tool, caller, at FROM kv WHERE owner = ? AND key = ?", OwnerKey(owner), key).
			Scan(&value, &expires, &updated, &out.Provenance.Tool, &out.Provenance.Caller, &at)
		if errors.Is(err, sql.ErrNoRows) {
			return ports.ErrNotFound
		} else if err != nil {
			return err
		}
		out.Value, out.ExpiresAt, out.UpdatedAt, out.Provenance.At = string(value), fromNanos(expires), fromNanos(updated), fromNanos(at)
		if !out.ExpiresAt.IsZero() && !now.Before(out.ExpiresAt) {
			return ports.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return ports.KVEntry{}, err
	}
	return out, nil
}

// KVDelete implements ports.MemoryBackend. Like Delete, it runs on a full
// disk too (Store.Delete).
func (m *MemoryStore) KVDelete(ctx context.Context, owner, key string) error {
	if err := m.s.carry(ctx, owner); err != nil {
		return err
	}
	ok := OwnerKey(owner)
	return m.s.Delete(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM kv WHERE owner = ? AND key = ?", ok, key)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ports.ErrNotFound
		}
		_, err = tx.ExecContext(ctx, "UPDATE mem_owner SET kv_count = max(kv_count - 1, 0) WHERE owner = ?", ok)
		return err
	})
}
