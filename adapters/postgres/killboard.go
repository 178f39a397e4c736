package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/migrations"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Kill-board settings.
const (
	// KillChannel is the NOTIFY channel kill-switch changes are announced
	// on.
	KillChannel = "arrowhead_kill"
	// killResync is how long a listener waits for a notification before it
	// reloads anyway (and so proves its connection).
	killResync = 15 * time.Second
	// killRetry is the pause before a lost listening connection is opened
	// again.
	killRetry = 250 * time.Millisecond
)

// KillBoard keeps kill-switch rules in a table of the state database
// (004_killswitch) and announces each change with NOTIFY, which every
// replica LISTENs for on a connection of its own. It is safe for
// concurrent use.
type KillBoard struct {
	pool  *Pool
	table string
	clock ports.Clock
}

var _ ports.KillBoard = (*KillBoard)(nil)

// NewKillBoard returns a board on pool; clock may be nil (the system
// clock).
func NewKillBoard(pool *Pool, clock ports.Clock) (*KillBoard, error) {
	if pool == nil {
		return nil, errors.New("postgres kill board needs a pool")
	}
	if clock == nil {
		clock = ports.SystemClock{}
	}
	return &KillBoard{pool: pool, table: pgx.Identifier{migrations.KillRulesTable}.Sanitize(), clock: clock}, nil
}

// killUnavailable hides pgx's error text (it may name the server).
func killUnavailable(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w: %w", op, ports.ErrKillBoardUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, ports.ErrKillBoardUnavailable)
}

func nullableTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// Throw upserts r and notifies, in one transaction (NOTIFY is delivered
// at commit, so a listener never reloads before the row is there).
func (b *KillBoard) Throw(ctx context.Context, r ports.KillRule) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding a kill rule: %w", err)
	}
	err = b.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO `+b.table+` (id, rule, until, created_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (id) DO UPDATE SET rule = EXCLUDED.rule, until = EXCLUDED.until, created_at = EXCLUDED.created_at`,
			r.ID, raw, nullableTime(r.Until), r.Created); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, KillChannel, r.ID)
		return err
	})
	if err != nil {
		return killUnavailable("throwing a kill rule", err)
	}
	return nil
}

// Lift deletes the rule id and notifies.
func (b *KillBoard) Lift(ctx context.Context, id string) (bool, error) {
	found := false
	err := b.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM `+b.table+` WHERE id = $1`, id)
		if err != nil {
			return err
		}
		found = tag.RowsAffected() > 0
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, KillChannel, id)
		return err
	})
	if err != nil {
		return false, killUnavailable("lifting a kill rule", err)
	}
	return found, nil
}

// List returns the active rules, oldest first, and deletes those that
// ended (best effort).
func (b *KillBoard) List(ctx context.Context) ([]ports.KillRule, error) {
	c, err := b.pool.acquire(ctx)
	if err != nil {
		return nil, killUnavailable("listing kill rules", err)
	}
	defer c.Release()
	now := b.clock.Now()
	rows, err := c.Query(ctx, `SELECT id, rule FROM `+b.table+` WHERE until IS NULL OR until > $1`, now)
	if err != nil {
		return nil, killUnavailable("listing kill rules", err)
	}
	var out []ports.KillRule
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return nil, killUnavailable("listing kill rules", err)
		}
		var r ports.KillRule
		if json.Unmarshal(raw, &r) != nil || r.ID != id || !r.Active(now) {
			continue
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, killUnavailable("listing kill rules", err)
	}
	_, _ = c.Exec(ctx, `DELETE FROM `+b.table+` WHERE until IS NOT NULL AND until <= $1`, now)
	slices.SortFunc(out, func(x, y ports.KillRule) int { return x.Created.Compare(y.Created) })
	return out, nil
}

// Watch LISTENs on a connection taken out of the pool for the purpose and
// calls changed on every notification, once each time it starts
// listening (so a replica that reconnects reloads what it missed), and
// every killResync. It returns when ctx ends.
func (b *KillBoard) Watch(ctx context.Context, changed func()) {
	for ctx.Err() == nil {
		b.listen(ctx, changed)
		select {
		case <-ctx.Done():
		case <-time.After(killRetry):
		}
	}
}

func (b *KillBoard) listen(ctx context.Context, changed func()) {
	pc, err := b.pool.acquire(ctx)
	if err != nil {
		return
	}
	// A listening connection must never go back to the pool: it is the
	// board's until it fails, then closed.
	conn := pc.Hijack()
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{KillChannel}.Sanitize()); err != nil {
		return
	}
	changed()
	for ctx.Err() == nil {
		wctx, cancel := context.WithTimeout(ctx, killResync)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			changed()
		case ctx.Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded):
			// Quiet: prove the connection and resynchronize.
			if _, err := conn.Exec(ctx, `SELECT 1`); err != nil {
				return
			}
			changed()
		default:
			return
		}
	}
}
