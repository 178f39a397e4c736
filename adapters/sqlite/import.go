package sqlite

import (
	"context"
	"errors"

	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/ports"
)

// importedMarker is the counter set once the previous store's state has
// been imported.
const importedMarker = "imported_bbolt"

// BoltSource is the state of the previous release's store (the bbolt file
// adapters/bolt keeps) that moves into this one: memories, kv entries,
// working sets and the embedded vector index.
type BoltSource struct {
	Memory      *boltstores.MemoryStore
	WorkingSets *boltstores.WorkingSets
	// Vectors calls its argument with each vector collection of the
	// previous store (boltstores.DumpBoltVectors); nil when it has none.
	Vectors func(func(boltstores.VectorDump) error) error
}

// Imported says whether ImportBolt has run on this store.
func (s *Store) Imported(ctx context.Context) (bool, error) {
	return s.markerSet(ctx, importedMarker)
}

// markerSet says whether the counter marking a one-time import is set.
func (s *Store) markerSet(ctx context.Context, marker string) (bool, error) {
	var done bool
	err := s.Read(ctx, func(tx *Tx) error {
		n, err := count(ctx, tx, marker)
		done = n > 0
		return err
	})
	return done, err
}

// ImportBolt copies src into the store once: in one transaction that
// first checks it has not run (several processes may start on one data
// directory at once) and ends by marking it done, so an import that
// fails leaves nothing behind and runs again at the next start. Rows the
// store already holds win over the imported ones, and every count and
// bound is recomputed from the rows afterwards.
func (s *Store) ImportBolt(ctx context.Context, src BoltSource) (imported bool, err error) {
	if src.Memory == nil || src.WorkingSets == nil {
		return false, errors.New("importing the previous store needs its memory and working sets")
	}
	err = retryBusy(ctx, func() error {
		imported = false
		sqlTx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer sqlTx.Rollback()
		tx := &Tx{Tx: sqlTx, stmts: &s.ws}
		if n, err := count(ctx, tx, importedMarker); err != nil || n > 0 {
			return err
		}
		err = src.Memory.Dump(ctx, func(d boltstores.MemoryDump) error {
			for _, r := range d.Records {
				var md any
				if len(r.Metadata) > 0 {
					md = r.Metadata
				}
				if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO mem_record ("+recordColumns+", owner, ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
					r.ID, []byte(r.Content), md, r.Hash, nanos(r.CreatedAt), nanos(r.UpdatedAt),
					r.Provenance.Tool, r.Provenance.Caller, nanos(r.Provenance.At), d.Owner, r.Namespace); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO mem_hash (owner, ns, hash, id) VALUES (?, ?, ?, ?)", d.Owner, r.Namespace, r.Hash, r.ID); err != nil {
					return err
				}
			}
			for _, e := range d.KV {
				if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO kv (owner, key, value, expires_at, updated_at, tool, caller, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
					d.Owner, e.Key, []byte(e.Value), nanos(e.ExpiresAt), nanos(e.UpdatedAt), e.Provenance.Tool, e.Provenance.Caller, nanos(e.Provenance.At)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		err = src.WorkingSets.Dump(ctx, func(d boltstores.WorkingSetDump) error {
			for _, set := range d.Sets {
				raw, err := ports.EncodeWorkingSetItems(set.Items)
				if err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO ws_set (owner, name, items) VALUES (?, ?, ?)", d.Owner, set.Name, raw); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if src.Vectors != nil {
			if err := importVectors(ctx, tx, src.Vectors); err != nil {
				return err
			}
		}
		for _, q := range []string{
			"INSERT OR REPLACE INTO mem_ns (owner, ns, count) SELECT owner, ns, count(*) FROM mem_record GROUP BY owner, ns",
			"INSERT OR IGNORE INTO mem_owner (owner) SELECT DISTINCT owner FROM mem_record UNION SELECT DISTINCT owner FROM kv",
			"UPDATE mem_owner SET used = (SELECT coalesce(sum(length(content) + coalesce(length(metadata), 0)), 0) FROM mem_record r WHERE r.owner = mem_owner.owner)," +
				" kv_count = (SELECT count(*) FROM kv WHERE kv.owner = mem_owner.owner)",
			"INSERT OR REPLACE INTO counter (name, n) SELECT 'ws_total', count(*) FROM ws_set",
			"INSERT OR REPLACE INTO counter (name, n) VALUES ('" + importedMarker + "', 1)",
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		imported = true
		return nil
	})
	if err != nil {
		return false, classify("importing the previous store", err)
	}
	return imported, nil
}
