package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/migrations"
)

// migrateTimeout bounds one migration run.
const migrateTimeout = 2 * time.Minute

// migrateCmd applies the embedded schema idempotently: the chunk tables of
// the allow-listed collections through ARROWHEAD_VECTOR_WRITE_DSN, the
// memory tables through ARROWHEAD_MEMORY_DSN. --dry-run prints the SQL,
// marking each migration that is applied only where the database offers
// the extension it requires (the memory tables' embedding column).
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
	all := migrations.ConfigFromSettings(*s)
	type target struct {
		variable, dsn string
		cfg           migrations.Config
	}
	var targets []target
	if len(all.Collections) > 0 {
		chunks := all
		chunks.Memory = s.MemoryDSN == "" || s.MemoryDSN == s.VectorWriteDSN
		targets = append(targets, target{"ARROWHEAD_VECTOR_WRITE_DSN", s.VectorWriteDSN, chunks})
	}
	if s.MemoryDSN != "" && (len(all.Collections) == 0 || s.MemoryDSN != s.VectorWriteDSN) {
		mem := all
		mem.Collections = nil
		targets = append(targets, target{"ARROWHEAD_MEMORY_DSN", s.MemoryDSN, mem})
	}
	if len(targets) == 0 {
		fmt.Fprintln(stderr, "arrowhead: nothing to migrate: set ARROWHEAD_PGVECTOR_COLLECTIONS with ARROWHEAD_VECTOR_WRITE_DSN, or ARROWHEAD_MEMORY_DSN")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), migrateTimeout)
	defer cancel()
	for _, t := range targets {
		if dryRun {
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
