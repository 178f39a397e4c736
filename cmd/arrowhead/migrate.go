package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/migrations"
)

// migrateTimeout bounds one migration run.
const migrateTimeout = 2 * time.Minute

// migrateTarget is one database to migrate and the tables it gets.
type migrateTarget struct {
	variable, dsn string
	cfg           migrations.Config
}

// migrateTargets says which tables go where: the chunk tables of the
// allow-listed collections through ARROWHEAD_VECTOR_WRITE_DSN, the memory
// tables through ARROWHEAD_MEMORY_DSN, the shared state through
// ARROWHEAD_STATE_DSN (and River's job tables, by River's migrator).
// Variables naming the same database are one target,
// migrated in one transaction.
func migrateTargets(s settings.Settings) []migrateTarget {
	base := migrations.ConfigFromSettings(s)
	base.Collections, base.Memory, base.State = nil, false, false
	var targets []migrateTarget
	target := func(variable, dsn string) *migrations.Config {
		for i := range targets {
			if dsn != "" && targets[i].dsn == dsn {
				return &targets[i].cfg
			}
		}
		targets = append(targets, migrateTarget{variable: variable, dsn: dsn, cfg: base})
		return &targets[len(targets)-1].cfg
	}
	if len(s.PgvectorCollections) > 0 {
		target("ARROWHEAD_VECTOR_WRITE_DSN", s.VectorWriteDSN).Collections = slices.Clone(s.PgvectorCollections)
	}
	if s.MemoryDSN != "" {
		target("ARROWHEAD_MEMORY_DSN", s.MemoryDSN).Memory = true
	}
	if s.StateDSN != "" {
		target("ARROWHEAD_STATE_DSN", s.StateDSN).State = true
	}
	return targets
}

// migrateCmd applies the embedded schema idempotently to every target
// (migrateTargets). --dry-run prints the SQL, marking each migration that
// is applied only where the database offers the extension it requires
// (the memory tables' embedding column).
func migrateCmd(args []string, stdout, stderr io.Writer) int {
	dryRun := false
	for _, a := range args {
		if a != "--dry-run" {
			fmt.Fprintln(stderr, "arrowhead: migrate takes only --dry-run")
			return exitUsage
		}
		dryRun = true
	}
	s, ok := loadSettings(stderr)
	if !ok {
		return exitUsage
	}
	targets := migrateTargets(*s)
	if len(targets) == 0 {
		fmt.Fprintln(stderr, "arrowhead: nothing to migrate: set ARROWHEAD_PGVECTOR_COLLECTIONS with ARROWHEAD_VECTOR_WRITE_DSN, ARROWHEAD_MEMORY_DSN or ARROWHEAD_STATE_DSN")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), migrateTimeout)
	defer cancel()
	for _, t := range targets {
		if dryRun {
			fmt.Fprintf(stdout, "-- %s\n", t.variable)
			stmts, err := migrations.Render(t.cfg)
			if err != nil {
				fmt.Fprintf(stderr, "arrowhead: %v\n", err)
				return exitFailure
			}
			for _, st := range stmts {
				if st.Requires != "" {
					fmt.Fprintf(stdout, "-- %s (applied only if the %s extension is available)\n%s;\n\n", st.Migration, st.Requires, st.SQL)
					continue
				}
				fmt.Fprintf(stdout, "-- %s\n%s;\n\n", st.Migration, st.SQL)
			}
			if t.cfg.State {
				names, err := postgres.TaskQueueMigrations()
				if err != nil {
					fmt.Fprintf(stderr, "arrowhead: %v\n", err)
					return exitFailure
				}
				for _, n := range names {
					fmt.Fprintf(stdout, "-- %s (River's own migration, applied by its migrator)\n\n", n)
				}
			}
			continue
		}
		if t.dsn == "" {
			fmt.Fprintf(stderr, "arrowhead: %s: is required to migrate the collections\n", t.variable)
			return exitUsage
		}
		norm, err := postgres.NormalizeDSN(t.dsn)
		if err != nil {
			fmt.Fprintf(stderr, "arrowhead: %s: %v\n", t.variable, err)
			return exitUsage
		}
		conn, err := pgx.Connect(ctx, norm)
		if err != nil {
			fmt.Fprintf(stderr, "arrowhead: %s: the database cannot be reached\n", t.variable)
			return exitFailure
		}
		applied, skipped, err := migrations.Apply(ctx, conn, t.cfg)
		if err == nil && t.cfg.State {
			// The task queue's tables are River's, applied by its own
			// migrator after ours.
			var queue []string
			queue, err = postgres.MigrateTaskQueue(ctx, conn)
			applied = append(applied, queue...)
		}
		_ = conn.Close(context.Background())
		if err != nil {
			fmt.Fprintf(stderr, "arrowhead: %s: %v\n", t.variable, err)
			return exitFailure
		}
		if len(applied) == 0 {
			fmt.Fprintf(stdout, "%s: schema is current\n", t.variable)
		}
		for _, m := range applied {
			fmt.Fprintf(stdout, "%s: applied %s\n", t.variable, m)
		}
		for _, m := range skipped {
			fmt.Fprintf(stdout, "%s: skipped %s: the database does not offer the extension it requires\n", t.variable, m)
		}
	}
	return exitOK
}
