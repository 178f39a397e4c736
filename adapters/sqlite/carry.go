package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// carrySchema records which legacy owners were carried over (carry), so a
// carry-over happens once per data directory and never again.
const carrySchema = `
CREATE TABLE owner_carried (
	legacy BLOB PRIMARY KEY,            -- OwnerKey of the bare subject carried
	owner BLOB NOT NULL,                -- OwnerKey of the token key it went to
	at INTEGER NOT NULL
) WITHOUT ROWID;
`

// Before principals were keyed by issuer and subject (ports.Principal.Key),
// a token caller's memories, kv entries, working sets and tasks were stored
// under its bare subject, the namespace the local operator and embedded
// callers keep. The server carries such data over to the token key on the
// token principal's first access to the store, under one rule:
//
//   - only when the store was opened with Config.TokenIssuer, the one
//     issuer the server accepts tokens from (the server sets it; a Go
//     program that embeds the store and names its own callers by bare
//     subject does not, so its callers' data is never moved);
//   - only to a key "iss=<that issuer> sub=<subject>", from the bare
//     subject;
//   - never from the operator's subject (ports.OperatorSubject): a token
//     with sub=local-operator gets nothing of the operator's;
//   - once per bare subject, recorded in owner_carried in the same
//     transaction, whether or not anything was there to move, so data a
//     bare-subject caller writes later stays its own.
//
// Rows the token key already holds win: a kv key, a working set name or a
// memory id present under both stays as the token key has it, and the
// legacy row stays behind, unread. Quota counters are recounted from the
// rows. Vector chunks are not carried: their ids derive from the tenant,
// and doc_index rebuilds them from the documents.

// legacyOwner is the bare subject whose data owner may carry over, and
// whether owner is a key that may.
func (s *Store) legacyOwner(owner string) (string, bool) {
	if s.carryPrefix == "" || !strings.HasPrefix(owner, s.carryPrefix) {
		return "", false
	}
	sub := owner[len(s.carryPrefix):]
	if sub == "" || sub == ports.OperatorSubject {
		return "", false
	}
	return sub, true
}

// carry carries owner's legacy data over once (see above); every store
// method that takes an owner calls it first. After the first call for an
// owner in this process it costs one map lookup. A full disk defers the
// carry-over to a later access rather than refusing the caller's read.
func (s *Store) carry(ctx context.Context, owner string) error {
	legacy, ok := s.legacyOwner(owner)
	if !ok {
		return nil
	}
	if _, done := s.carried.Load(owner); done {
		return nil
	}
	lk := OwnerKey(legacy)
	var recorded bool
	if err := s.Read(ctx, func(tx *Tx) error {
		var err error
		recorded, err = carriedAlready(ctx, tx, lk)
		return err
	}); err != nil {
		return err
	}
	if !recorded {
		err := s.Write(ctx, func(tx *Tx) error { return carryOver(ctx, tx, lk, owner, s.carryIssuer, legacy) })
		if errors.Is(err, ErrFull) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	s.carried.Store(owner, struct{}{})
	return nil
}

func carriedAlready(ctx context.Context, tx *Tx, legacy []byte) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM owner_carried WHERE legacy = ?", legacy).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// carryOver moves what the bare subject lk owns to owner inside tx; the
// marker it writes makes a rerun (Write may rerun fn) or another process
// that raced this one do nothing.
func carryOver(ctx context.Context, tx *Tx, lk []byte, owner, issuer, subject string) error {
	if done, err := carriedAlready(ctx, tx, lk); err != nil || done {
		return err
	}
	ok := OwnerKey(owner)
	for _, q := range []string{
		"UPDATE OR IGNORE mem_record SET owner = ? WHERE owner = ?",
		"UPDATE OR IGNORE mem_hash SET owner = ? WHERE owner = ?",
		"UPDATE OR IGNORE kv SET owner = ? WHERE owner = ?",
		"UPDATE OR IGNORE ws_set SET owner = ? WHERE owner = ?",
		"UPDATE OR IGNORE mem_ns SET owner = ? WHERE owner = ?",
	} {
		if _, err := tx.ExecContext(ctx, q, ok, lk); err != nil {
			return err
		}
	}
	if err := carryTasks(ctx, tx, lk, owner, issuer, subject); err != nil {
		return err
	}
	// A dedup entry left behind points at a record that moved, or at one
	// the token key's own entry shadows: neither is read again.
	if _, err := tx.ExecContext(ctx, "DELETE FROM mem_hash WHERE owner = ?", lk); err != nil {
		return err
	}
	for _, k := range [][]byte{ok, lk} {
		if err := recount(ctx, tx, k); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM mem_ns WHERE owner = ? AND count = 0", lk); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO owner_carried (legacy, owner, at) VALUES (?, ?, ?)", lk, ok, time.Now().UnixNano())
	return err
}

// carryTasks moves the legacy owner's tasks: the record names its owner
// and the principal its work runs as, so each is rewritten, as the token
// caller it was.
func carryTasks(ctx context.Context, tx *Tx, lk []byte, owner, issuer, subject string) error {
	rows, err := tx.QueryContext(ctx, "SELECT id, runner, record FROM task WHERE owner = ?", lk)
	if err != nil {
		return err
	}
	type row struct {
		t      ports.Task
		runner string
	}
	var moved []row
	for rows.Next() {
		var id, runner string
		var raw []byte
		if err := rows.Scan(&id, &runner, &raw); err != nil {
			rows.Close()
			return err
		}
		t, err := decodeTask(raw, id)
		if err != nil {
			rows.Close()
			return err
		}
		moved = append(moved, row{t, runner})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range moved {
		m.t.Owner = owner
		if m.t.Principal.Subject == subject && m.t.Principal.Issuer == "" {
			m.t.Principal.Issuer = issuer
		}
		if err := writeTask(ctx, tx, "INSERT OR IGNORE", m.t, m.runner); err != nil {
			return err
		}
		if err := deleteTask(ctx, tx, lk, m.t.ID); err != nil {
			return err
		}
	}
	return nil
}

// recount sets an owner's bounded counters from its rows: records per
// namespace, bytes against the quota, kv entries. An owner left with
// neither loses its quota row.
func recount(ctx context.Context, tx *Tx, k []byte) error {
	if _, err := tx.ExecContext(ctx, "UPDATE mem_ns SET count = (SELECT count(*) FROM mem_record r WHERE r.owner = mem_ns.owner AND r.ns = mem_ns.ns) WHERE owner = ?", k); err != nil {
		return err
	}
	var used, keys int64
	if err := tx.QueryRowContext(ctx, "SELECT coalesce(sum(length(content) + coalesce(length(metadata), 0)), 0) FROM mem_record WHERE owner = ?", k).Scan(&used); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM kv WHERE owner = ?", k).Scan(&keys); err != nil {
		return err
	}
	if used == 0 && keys == 0 {
		_, err := tx.ExecContext(ctx, "DELETE FROM mem_owner WHERE owner = ?", k)
		return err
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO mem_owner (owner, used, kv_count) VALUES (?, ?, ?) ON CONFLICT (owner) DO UPDATE SET used = excluded.used, kv_count = excluded.kv_count", k, used, keys)
	return err
}
