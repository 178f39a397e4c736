package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arrowhead-go/arrowhead/ports"
)

func TestVectorLikePrefix(t *testing.T) {
	for in, want := range map[string]string{
		"":             "%",
		"docs/":        "docs/%",
		"a_b":          `a\_b%`,
		"100%":         `100\%%`,
		`back\slash`:   `back\\slash%`,
		`%_\`:          `\%\_\\%`,
		"naïve/[x]*?.": "naïve/[x]*?.%",
	} {
		if got := likePrefix(in); got != want {
			t.Errorf("likePrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVectorHNSWLevel(t *testing.T) {
	for v, want := range map[string]int32{
		"0.8.7": 3, "0.8.0": 3, "1.0.0": 3, "0.10.1": 3, "0.7.4": 2, "0.5.0": 2, "0.4.4": 1, "": 1, "x.y": 1, "0": 1,
	} {
		if got := hnswLevel(v); got != want {
			t.Errorf("hnswLevel(%q) = %d, want %d", v, got, want)
		}
	}
}

// TestVectorStatementsBindEveryValue checks the built statements: the only
// names in them are the configured identifiers, quoted, and every value is
// a $n placeholder.
func TestVectorStatementsBindEveryValue(t *testing.T) {
	cols := VectorColumns{
		Tenant: "owner_col", ID: "pk", Content: "body", Embedding: "vec", Source: "src",
		ChunkIndex: "pos", ContentHash: "digest", Tsvector: "tsv",
	}
	tb := buildTable("my_chunks", cols)
	stmts := map[string]string{
		"search": tb.search, "hybrid": tb.hybrid, "hashes": tb.hashes, "upsert": tb.upsert,
		"truncate": tb.truncate, "sources": tb.sources,
	}
	// Every double-quoted name is a configured identifier or one of the
	// statement's own mixed-case aliases.
	quoted := regexp.MustCompile(`"([^"]*)"`)
	allowed := map[string]bool{"my_chunks": true, "C": true}
	for _, c := range []string{cols.Tenant, cols.ID, cols.Content, cols.Embedding, cols.Source, cols.ChunkIndex, cols.ContentHash, cols.Tsvector} {
		allowed[c] = true
	}
	for name, sql := range stmts {
		for _, m := range quoted.FindAllStringSubmatch(sql, -1) {
			id := m[1]
			if !allowed[id] && strings.ToLower(id) == id {
				t.Errorf("%s: unexpected lower-case quoted name %q", name, id)
			}
		}
		if strings.Contains(sql, ";") {
			t.Errorf("%s contains a semicolon", name)
		}
		// No string literal but the LIKE escape.
		if n := strings.Count(sql, "'"); n != 0 && !(name == "sources" && strings.Contains(sql, `ESCAPE E'\\'`) && n == 2) {
			t.Errorf("%s has string literals:\n%s", name, sql)
		}
		for _, col := range []string{"tenant", "content", "embedding"} {
			if strings.Contains(sql, `"`+col+`"`) {
				t.Errorf("%s uses the default column %q instead of the configured one", name, col)
			}
		}
	}
	// The tenant filter is in every read and delete.
	for _, name := range []string{"search", "hybrid", "hashes", "truncate", "sources"} {
		if !strings.Contains(stmts[name], `"owner_col" = $1`) {
			t.Errorf("%s does not filter on the tenant parameter", name)
		}
	}
	if strings.Count(tb.hybrid, `"owner_col" = $1`) != 3 {
		t.Errorf("hybrid filters on the tenant %d times, want 3 (both branches and the join)", strings.Count(tb.hybrid, `"owner_col" = $1`))
	}
	if !strings.Contains(tb.hybrid, "$5::regconfig") {
		t.Error("the language is not a bound parameter cast to regconfig")
	}
}

func TestVectorClassify(t *testing.T) {
	cases := []struct {
		err  error
		kind ports.VectorErrorKind
	}{
		{&pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"}, ports.VectorTimeout},
		{&pgconn.PgError{Code: "22000", Message: "different vector dimensions 3 and 4"}, ports.VectorDimension},
		{&pgconn.PgError{Code: "23505", Message: `duplicate key value violates unique constraint "x" Key (tenant)=(secret)`}, ports.VectorFailed},
		{&pgconn.PgError{Code: "42704", Message: `text search configuration "klingon" does not exist`}, ports.VectorFailed},
		{&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, ports.VectorUnavailable},
		{&pgconn.PgError{Code: "08006", Message: "connection failure"}, ports.VectorUnavailable},
		{&pgconn.PgError{Code: "53300", Message: "too many connections"}, ports.VectorUnavailable},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), ports.VectorTimeout},
		{context.Canceled, ports.VectorFailed},
		{io.ErrUnexpectedEOF, ports.VectorUnavailable},
		{ErrClosed, ports.VectorUnavailable},
		{errors.New("something the driver said about secret values"), ports.VectorFailed},
		{&ports.VectorError{Kind: ports.VectorLimit}, ports.VectorLimit},
	}
	for _, tc := range cases {
		err := classifyVector("searching", tc.err)
		var ve *ports.VectorError
		if !errors.As(err, &ve) || ve.Kind != tc.kind {
			t.Errorf("classify(%v) = %v, want kind %s", tc.err, err, tc.kind)
			continue
		}
		for e := error(ve); e != nil; e = errors.Unwrap(e) {
			if msg := e.Error(); strings.Contains(msg, "secret") || strings.Contains(msg, "klingon") || strings.Contains(msg, "dimensions 3") {
				t.Errorf("classify(%v) kept driver text: %q", tc.err, msg)
			}
		}
	}
	if err := classifyVector("searching", &pgconn.PgError{Code: "57014"}); !strings.Contains(errors.Unwrap(err).Error(), "sqlstate 57014") {
		t.Errorf("the cause lost the SQLSTATE: %v", errors.Unwrap(err))
	}
	if err := classifyVector("searching", context.Canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("cancellation is not recognisable: %v", err)
	}
}
