package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arrowhead-go/arrowhead/migrations"
	"github.com/arrowhead-go/arrowhead/ports"
)

// WorkingSetsName is the working sets' name in /ready.
const WorkingSetsName = "postgres-state"

// The working sets' statements. The table name is a constant and every
// value a bound parameter; the owner is in every predicate.
const (
	wsTable = migrations.WorkingSetsTable

	wsSelectForUpdate = `SELECT items FROM ` + wsTable + ` WHERE owner = $1 AND name = $2 FOR UPDATE`
	wsSelect          = `SELECT items FROM ` + wsTable + ` WHERE owner = $1 AND name = $2`
	wsUpdate          = `UPDATE ` + wsTable + ` SET items = $3, updated_at = now() WHERE owner = $1 AND name = $2`
	wsInsert          = `INSERT INTO ` + wsTable + ` (owner, name, items) VALUES ($1, $2, $3)`
	wsDelete          = `DELETE FROM ` + wsTable + ` WHERE owner = $1 AND name = $2`
	wsCountOwner      = `SELECT count(*) FROM ` + wsTable + ` WHERE owner = $1`
	wsCountAll        = `SELECT count(*) FROM ` + wsTable
	wsLock            = `SELECT pg_advisory_xact_lock($1)`
	wsTablePresent    = `SELECT to_regclass($1) IS NOT NULL`

	// wsCreateLockKey serialises creating and deleting sets across every
	// replica, so the per-owner and store-wide counts a creation checks
	// cannot change before it commits. Pins into an existing set take only
	// that set's row lock. It is "ahwsets" in ASCII, distinct from the
	// migrations' key.
	wsCreateLockKey int64 = 0x61687773657473
)

// WorkingSets is ports.WorkingSets on PostgreSQL (ARROWHEAD_STATE_DSN):
// every replica on the database sees the same sets. Each method is one
// transaction. A pin into an existing set locks that set's row, so
// concurrent pins from any replica are applied one after the other; a pin
// that creates a set, and a delete, first take a transaction-scoped
// advisory lock, so the bounds they check hold when they commit.
//
// Lock order is always the advisory lock, then a set's row: a creation
// holds no row lock when it waits for the advisory lock, and a pin into an
// existing set never takes it, so no two transactions wait on each other.
type WorkingSets struct {
	pool   *Pool
	limits ports.WorkingSetLimits
}

// NewWorkingSets keeps working sets in the pool's database, in the table
// `arrowhead migrate` creates, under limits; each limit must be positive.
func NewWorkingSets(pool *Pool, limits ports.WorkingSetLimits) (*WorkingSets, error) {
	if pool == nil {
		return nil, errors.New("working sets on PostgreSQL need a connection pool (ARROWHEAD_STATE_DSN)")
	}
	if err := limits.Check(); err != nil {
		return nil, err
	}
	return &WorkingSets{pool: pool, limits: limits}, nil
}

// Name implements ports.HealthReporter.
func (w *WorkingSets) Name() string { return WorkingSetsName }

// Health is ok when the database answers and the working set table
// exists (degraded before `arrowhead migrate`), down otherwise.
func (w *WorkingSets) Health(ctx context.Context) ports.HealthState {
	return w.pool.health(ctx, func(ctx context.Context, c *pgx.Conn) error {
		var present bool
		if err := c.QueryRow(ctx, wsTablePresent, wsTable).Scan(&present); err != nil {
			return err
		}
		if !present {
			return errors.New("the working set table is missing")
		}
		return nil
	})
}

// read returns the set's items under query (wsSelect or
// wsSelectForUpdate); found is false when the owner has no such set.
func readWorkingSet(ctx context.Context, tx pgx.Tx, query, owner, name string) (items []ports.WorkingSetItem, found bool, err error) {
	var raw []byte
	switch err := tx.QueryRow(ctx, query, owner, name).Scan(&raw); {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	items, err = ports.DecodeWorkingSetItems(raw)
	return items, err == nil, err
}

// Get implements ports.WorkingSets.
func (w *WorkingSets) Get(ctx context.Context, owner, name string) (ports.WorkingSet, error) {
	var items []ports.WorkingSetItem
	err := w.pool.inTx(ctx, pgx.ReadOnly, false, func(tx pgx.Tx) error {
		got, found, err := readWorkingSet(ctx, tx, wsSelect, owner, name)
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
		return ports.WorkingSet{}, stateErr("reading a working set", err)
	}
	return ports.WorkingSet{Name: name, Items: items}, nil
}

// Pin implements ports.WorkingSets.
func (w *WorkingSets) Pin(ctx context.Context, owner, name string, add []ports.WorkingSetItem) (ports.WorkingSet, error) {
	var merged []ports.WorkingSetItem
	err := w.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
		items, exists, err := readWorkingSet(ctx, tx, wsSelectForUpdate, owner, name)
		if err != nil {
			return err
		}
		if !exists {
			// Another replica may create the set, or others, meanwhile:
			// take the creation lock and look again.
			if _, err := tx.Exec(ctx, wsLock, wsCreateLockKey); err != nil {
				return err
			}
			if items, exists, err = readWorkingSet(ctx, tx, wsSelectForUpdate, owner, name); err != nil {
				return err
			}
		}
		if !exists {
			if err := w.roomForASet(ctx, tx, owner); err != nil {
				return err
			}
		}
		if merged, err = ports.MergePins(items, add, w.limits.MaxItemsPerSet); err != nil {
			return err
		}
		raw, err := ports.EncodeWorkingSetItems(merged)
		if err != nil {
			return err
		}
		statement := wsUpdate
		if !exists {
			statement = wsInsert
		}
		_, err = tx.Exec(ctx, statement, owner, name, raw)
		return err
	})
	if err != nil {
		return ports.WorkingSet{}, stateErr("pinning to a working set", err)
	}
	return ports.WorkingSet{Name: name, Items: merged}, nil
}

// roomForASet checks, under the creation lock, that the owner and the
// store may hold one more set.
func (w *WorkingSets) roomForASet(ctx context.Context, tx pgx.Tx, owner string) error {
	var mine, all int
	if err := tx.QueryRow(ctx, wsCountOwner, owner).Scan(&mine); err != nil {
		return err
	}
	if err := tx.QueryRow(ctx, wsCountAll).Scan(&all); err != nil {
		return err
	}
	return w.limits.RoomForSet(mine, all)
}

// Unpin implements ports.WorkingSets.
func (w *WorkingSets) Unpin(ctx context.Context, owner, name string, keys []ports.WorkingSetItem) (ports.WorkingSet, error) {
	var kept []ports.WorkingSetItem
	err := w.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
		items, found, err := readWorkingSet(ctx, tx, wsSelectForUpdate, owner, name)
		if err != nil {
			return err
		}
		if !found {
			return ports.ErrNotFound
		}
		kept = ports.Unpinned(items, keys)
		raw, err := ports.EncodeWorkingSetItems(kept)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, wsUpdate, owner, name, raw)
		return err
	})
	if err != nil {
		return ports.WorkingSet{}, stateErr("unpinning from a working set", err)
	}
	return ports.WorkingSet{Name: name, Items: kept}, nil
}

// Delete implements ports.WorkingSets.
func (w *WorkingSets) Delete(ctx context.Context, owner, name string) error {
	err := w.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, wsLock, wsCreateLockKey); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, wsDelete, owner, name)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ports.ErrNotFound
		}
		return nil
	})
	return stateErr("deleting a working set", err)
}

// stateErr is dbErr for the working sets and the task registry.
func stateErr(op string, err error) error {
	return dbErr(op, err, func(err error) bool {
		return errors.Is(err, ports.ErrNotFound) || errors.Is(err, ports.ErrTooManySets) ||
			errors.Is(err, ports.ErrSetFull) || errors.Is(err, ports.ErrSetsExhausted) ||
			errors.Is(err, ports.ErrWorkingSetDamaged)
	})
}

// dbErr is what a state adapter returns for err: the port's own errors
// (those for which own is true) as they are; cancellation, a timeout and
// a closed pool as such; anything else as a fixed error naming the
// operation and, for a server error, its SQLSTATE, never driver text,
// which can quote values.
func dbErr(op string, err error, own func(error) bool) error {
	switch {
	case err == nil:
		return nil
	case own(err):
		return err
	case errors.Is(err, ports.ErrOutcomeUnknown):
		return fmt.Errorf("%s: %w", op, ports.ErrOutcomeUnknown)
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err):
		return fmt.Errorf("%s: %w", op, context.DeadlineExceeded)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", op, context.Canceled)
	case errors.Is(err, ErrClosed):
		return fmt.Errorf("%s: %w", op, ErrClosed)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: the database failed (sqlstate %s)", op, pe.Code)
	}
	return fmt.Errorf("%s: the database is unavailable", op)
}
