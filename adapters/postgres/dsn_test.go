package postgres

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestNormalizeDSNAccepts(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"postgres://u:p@h/db", "postgres://u:p@h/db"},
		{"postgresql://u:p@h:5433/db?sslmode=disable", "postgres://u:p@h:5433/db?sslmode=disable"},
		{"postgresql+asyncpg://readonly@db.example.com/app", "postgres://readonly@db.example.com/app"},
		{"postgresql+psycopg2://u@h/db", "postgres://u@h/db"},
		{"postgresql+pg8000://u@h/db", "postgres://u@h/db"},
		{"postgres+asyncpg://u@h/db", "postgres://u@h/db"},
		{"PostgreSQL+AsyncPG://u@h/db", "postgres://u@h/db"},
		{"  postgres://u@h/db\n", "postgres://u@h/db"},
		// A percent-encoded password survives as written.
		{"postgresql+asyncpg://u:p%40ss%23w@h/db", "postgres://u:p%40ss%23w@h/db"},
		// Unix socket through the host parameter.
		{"postgresql:///db?host=/var/run/postgresql", "postgres:///db?host=/var/run/postgresql"},
		// asyncpg's ssl parameter becomes libpq's sslmode.
		{"postgresql+asyncpg://u@h/db?ssl=require", "postgres://u@h/db?sslmode=require"},
		{"postgresql+asyncpg://u@h/db?ssl=true", "postgres://u@h/db?sslmode=require"},
		{"postgresql+asyncpg://u@h/db?ssl=false&application_name=x", "postgres://u@h/db?application_name=x&sslmode=disable"},
		{"postgresql+asyncpg://u@h/db?ssl=verify-full&sslmode=verify-full", "postgres://u@h/db?sslmode=verify-full"},
	}
	for _, tt := range tests {
		got, err := NormalizeDSN(tt.in)
		if err != nil {
			t.Errorf("NormalizeDSN(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("NormalizeDSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
		// What comes out is what pgx reads.
		if _, err := pgx.ParseConfig(got); err != nil {
			t.Errorf("pgx cannot parse NormalizeDSN(%q) = %q: %v", tt.in, got, err)
		}
	}
}

func TestNormalizeDSNRefuses(t *testing.T) {
	const secret = "hunter2"
	tests := []struct {
		in   string
		want error
	}{
		{"", ErrDSNEmpty},
		{"   ", ErrDSNEmpty},
		{"host=h user=u password=" + secret, ErrDSNNotURL},
		{"://u:" + secret + "@h/db", ErrDSNNotURL},
		{"postgres:u:" + secret + "@h/db", ErrDSNNotURL},
		{"mysql://u:" + secret + "@h/db", ErrDSNEngine},
		{"mysql+aiomysql://u:" + secret + "@h/db", ErrDSNEngine},
		{"sqlite+aiosqlite:///tmp/" + secret + ".db", ErrDSNEngine},
		{"mssql+pyodbc://u:" + secret + "@h/db", ErrDSNEngine},
		{"oracle://u:" + secret + "@h/db", ErrDSNEngine},
		{"cockroachdb://u:" + secret + "@h/db", ErrDSNEngine},
		{"postgresqlx://u:" + secret + "@h/db", ErrDSNEngine},
		{"redis://u:" + secret + "@h/0", ErrDSNEngine},
		{"postgresql+://u:" + secret + "@h/db", ErrDSNMalformed},
		{"postgresql+async pg://u:" + secret + "@h/db", ErrDSNMalformed},
		{"postgresql+asyncpg://u:" + secret + "%zz@h/db", ErrDSNMalformed},
		{"postgresql+asyncpg://u:pa#" + secret + "@h/db", ErrDSNMalformed},
		{"postgres://u:" + secret + "@h:99999999999/db?x=%zz", ErrDSNMalformed},
		{"postgresql+asyncpg://u:" + secret + "@h/db?ssl=maybe", ErrDSNSSL},
		{"postgresql+asyncpg://u:" + secret + "@h/db?ssl=require&sslmode=disable", ErrDSNSSL},
		{"postgresql+asyncpg://u:" + secret + "@h/db?ssl=require&ssl=disable", ErrDSNSSL},
	}
	for _, tt := range tests {
		got, err := NormalizeDSN(tt.in)
		if !errors.Is(err, tt.want) {
			t.Errorf("NormalizeDSN(%q) = %q, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "@h") {
			t.Errorf("error for %q quotes the DSN: %v", tt.in, err)
		}
	}
}
