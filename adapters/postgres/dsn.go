package postgres

import (
	"errors"
	"net/url"
	"strings"
)

// DSN errors. They name what is wrong and never quote the DSN, which may
// carry a password.
var (
	// ErrDSNEmpty is returned for an empty DSN.
	ErrDSNEmpty = errors.New("the PostgreSQL DSN is empty")
	// ErrDSNNotURL is returned for a DSN that is not a URL (for example
	// libpq's key=value form).
	ErrDSNNotURL = errors.New("the PostgreSQL DSN must be a URL (postgres://, postgresql:// or postgresql+asyncpg://)")
	// ErrDSNEngine is returned for a URL naming another database engine.
	ErrDSNEngine = errors.New("the DSN names a database engine other than PostgreSQL, which this server does not support")
	// ErrDSNMalformed is returned for a URL that does not parse.
	ErrDSNMalformed = errors.New("the PostgreSQL DSN is not a well-formed URL")
	// ErrDSNSSL is returned for an SQLAlchemy/asyncpg ssl parameter that has
	// no libpq sslmode equivalent, or that contradicts an sslmode also given.
	ErrDSNSSL = errors.New("the PostgreSQL DSN has an ssl parameter that is not a known sslmode or conflicts with sslmode")
)

// sslModes maps the values asyncpg accepts for its ssl parameter to libpq's
// sslmode, which is what pgx reads.
var sslModes = map[string]string{
	"disable":     "disable",
	"allow":       "allow",
	"prefer":      "prefer",
	"require":     "require",
	"verify-ca":   "verify-ca",
	"verify-full": "verify-full",
	"true":        "require",
	"false":       "disable",
}

// NormalizeDSN accepts a PostgreSQL DSN in URL form and returns a URL pgx
// parses. Accepted schemes (case-insensitive) are postgres://,
// postgresql://, and the SQLAlchemy spelling with a driver suffix such as
// postgresql+asyncpg:// or postgresql+psycopg://; the suffix is dropped,
// since pgx is the driver here. asyncpg's ssl=<mode> query parameter
// becomes sslmode=<mode>. Any other scheme is refused with ErrDSNEngine.
//
// The result keeps everything after the scheme as written. Errors are the
// ErrDSN* values and never contain any part of raw.
func NormalizeDSN(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", ErrDSNEmpty
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || scheme == "" {
		return "", ErrDSNNotURL
	}
	base, driver, hasDriver := strings.Cut(strings.ToLower(scheme), "+")
	if base != "postgres" && base != "postgresql" {
		return "", ErrDSNEngine
	}
	if hasDriver && !isDriverName(driver) {
		return "", ErrDSNMalformed
	}
	out := "postgres://" + rest
	u, err := url.Parse(out)
	if err != nil || u.Opaque != "" {
		return "", ErrDSNMalformed
	}
	if u.Fragment != "" || strings.Contains(rest, "#") {
		// A fragment means nothing to PostgreSQL; it is most likely an
		// unescaped '#' in a password.
		return "", ErrDSNMalformed
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", ErrDSNMalformed
	}
	if vals, ok := query["ssl"]; ok {
		if len(vals) != 1 {
			return "", ErrDSNSSL
		}
		mode, known := sslModes[strings.ToLower(vals[0])]
		if !known {
			return "", ErrDSNSSL
		}
		if have, ok := query["sslmode"]; ok && (len(have) != 1 || have[0] != mode) {
			return "", ErrDSNSSL
		}
		query.Del("ssl")
		query.Set("sslmode", mode)
		u.RawQuery = query.Encode()
		out = u.String()
	}
	return out, nil
}

// isDriverName reports whether s looks like an SQLAlchemy driver name
// (asyncpg, psycopg2, pg8000, ...).
func isDriverName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
