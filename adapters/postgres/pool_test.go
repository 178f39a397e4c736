package postgres

// Unit tests of the pool's configuration: no database. The pool runs
// against PostgreSQL and PGlite in the integration tests.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func newTestPool(t *testing.T, dsn string, opts ...Option) *Pool {
	t.Helper()
	p, err := NewPool(context.Background(), dsn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestNewPoolConfig(t *testing.T) {
	p := newTestPool(t, "postgresql+asyncpg://u:pw@127.0.0.1:1/db?sslmode=disable"+
		"&default_query_exec_mode=simple_protocol&statement_cache_capacity=100&description_cache_capacity=0"+
		"&application_name=other&pool_max_conns=7&pool_max_conn_idle_time=1m")
	cfg := p.pool.Config()
	cc := cfg.ConnConfig
	if cc.DefaultQueryExecMode != pgx.QueryExecModeCacheDescribe {
		t.Errorf("exec mode = %v, want cache describe whatever the DSN says", cc.DefaultQueryExecMode)
	}
	if cc.StatementCacheCapacity != 0 {
		t.Errorf("statement cache = %d: named prepared statements would be created", cc.StatementCacheCapacity)
	}
	if cc.DescriptionCacheCapacity != descriptionCacheSize {
		t.Errorf("description cache = %d, want %d (cache describe needs one)", cc.DescriptionCacheCapacity, descriptionCacheSize)
	}
	if got := cc.RuntimeParams["application_name"]; got != ApplicationName {
		t.Errorf("application_name = %q, want %q", got, ApplicationName)
	}
	for k := range cc.RuntimeParams {
		if strings.HasPrefix(k, "pool_") {
			t.Errorf("%s would be sent to the server as a setting", k)
		}
	}
	if cfg.MaxConns != 7 {
		t.Errorf("pool size = %d, want the DSN's pool_max_conns 7", cfg.MaxConns)
	}
	if cfg.MaxConnIdleTime != time.Minute {
		t.Errorf("idle time = %v, want the DSN's pool_max_conn_idle_time", cfg.MaxConnIdleTime)
	}
	if cc.ConnectTimeout != DefaultConnectTimeout || p.healthTimeout != DefaultHealthTimeout {
		t.Errorf("timeouts = %v, %v, want the defaults", cc.ConnectTimeout, p.healthTimeout)
	}

	p2 := newTestPool(t, "postgres://u@127.0.0.1:1/db?pool_max_conns=7",
		WithMaxConns(2), WithConnectTimeout(time.Second), WithHealthTimeout(time.Second))
	if got := p2.pool.Config().MaxConns; got != 2 {
		t.Errorf("pool size = %d, want WithMaxConns(2) over the DSN", got)
	}
	if p2.pool.Config().ConnConfig.ConnectTimeout != time.Second || p2.healthTimeout != time.Second {
		t.Errorf("timeouts not applied")
	}

	p3 := newTestPool(t, "postgres://u@127.0.0.1:1/db", WithMaxConns(0), WithConnectTimeout(-1), WithHealthTimeout(-1))
	if got := p3.pool.Config().MaxConns; got != DefaultMaxConns {
		t.Errorf("pool size = %d, want DefaultMaxConns", got)
	}
	if p3.pool.Config().ConnConfig.ConnectTimeout != DefaultConnectTimeout || p3.healthTimeout != DefaultHealthTimeout {
		t.Errorf("a non-positive timeout replaced the default")
	}

	// WithDefaultMaxConns sizes a pool whose DSN names no size, only.
	if got := newTestPool(t, "postgres://u@127.0.0.1:1/db", WithDefaultMaxConns(16)).pool.Config().MaxConns; got != 16 {
		t.Errorf("pool size = %d, want WithDefaultMaxConns(16)", got)
	}
	if got := newTestPool(t, "postgres://u@127.0.0.1:1/db?pool_max_conns=7", WithDefaultMaxConns(16)).pool.Config().MaxConns; got != 7 {
		t.Errorf("pool size = %d, want the DSN's 7 over WithDefaultMaxConns", got)
	}
}

func TestNewPoolRefusesWithoutQuotingTheDSN(t *testing.T) {
	tests := []struct {
		dsn  string
		want error
	}{
		{"", ErrDSNEmpty},
		{"mysql://u:hunter2@dbhost/db", ErrDSNEngine},
		{"host=dbhost password=hunter2", ErrDSNNotURL},
		{"postgres://u:hunter2@dbhost/db?sslmode=bogus", ErrInvalidDSN},
		{"postgres://u:hunter2@dbhost:notaport/db", ErrDSNMalformed},
		{"postgres://u:hunter2@dbhost/db?pool_max_conns=many", ErrInvalidDSN},
		{"postgres://u:hunter2@dbhost/db?pool_max_conns=0", ErrInvalidDSN},
		{"postgres://u:hunter2@dbhost/db?pool_max_conn_lifetime=soon", ErrInvalidDSN},
		// Not one of pgxpool's: the server would refuse it at every connect.
		{"postgres://u:hunter2@dbhost/db?pool_size=5", ErrInvalidDSN},
	}
	for _, tt := range tests {
		p, err := NewPool(context.Background(), tt.dsn)
		if !errors.Is(err, tt.want) {
			if p != nil {
				p.Close()
			}
			t.Errorf("NewPool(%q) error = %v, want %v", tt.dsn, err, tt.want)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "hunter2") || strings.Contains(msg, "dbhost") {
			t.Errorf("error quotes the DSN: %q", msg)
		}
	}
	newTestPool(t, "postgresql+asyncpg://u:p@h/db?pool_max_conns=3")
}

func TestNewSQLRunnerNeedsAPool(t *testing.T) {
	if r, err := NewSQLRunner(nil); err == nil || r != nil {
		t.Fatalf("NewSQLRunner(nil) = %v, %v; want an error", r, err)
	}
}
