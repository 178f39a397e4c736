package postgres

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// TaskQueueMigrations names River's own migrations, which
// MigrateTaskQueue applies: "river/<version>_<name>", in order.
func TaskQueueMigrations() ([]string, error) {
	m, err := taskQueueMigrator()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, v := range m.AllVersions() {
		names = append(names, fmt.Sprintf("river/%03d_%s", v.Version, v.Name))
	}
	return names, nil
}

// MigrateTaskQueue brings River's job tables in db's database (in the
// search_path's schema, like the other state tables) up to the version this
// build's River needs, and returns the migrations it applied, named as in
// TaskQueueMigrations. Each runs in a transaction of its own: some add an
// enum value that a later statement uses, which PostgreSQL admits only
// after a commit. River's migrator records what it applied in its own table
// (river_migration), so a rerun applies nothing; errors carry no driver
// text.
func MigrateTaskQueue(ctx context.Context, db interface {
	Begin(context.Context) (pgx.Tx, error)
}) ([]string, error) {
	m, err := taskQueueMigrator()
	if err != nil {
		return nil, err
	}
	var applied []string
	for _, v := range m.AllVersions() {
		res, err := migrateOne(ctx, db, m, v.Version)
		if err != nil {
			return applied, stateErr(fmt.Sprintf("migrating the task queue to version %d", v.Version), err)
		}
		for _, done := range res.Versions {
			applied = append(applied, fmt.Sprintf("river/%03d_%s", done.Version, done.Name))
		}
	}
	return applied, nil
}

// migrateOne brings River up to version in one transaction.
func migrateOne(ctx context.Context, db interface {
	Begin(context.Context) (pgx.Tx, error)
}, m *rivermigrate.Migrator[pgx.Tx], version int) (*rivermigrate.MigrateResult, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	res, err := m.MigrateTx(ctx, tx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{TargetVersion: version})
	if err != nil {
		return nil, err
	}
	return res, tx.Commit(ctx)
}

func taskQueueMigrator() (*rivermigrate.Migrator[pgx.Tx], error) {
	m, err := rivermigrate.New(riverpgxv5.New(nil), &rivermigrate.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, fmt.Errorf("the task queue's migrations: %w", err)
	}
	return m, nil
}
