package settings

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/security"
)

// Var is one configuration variable: name, default, and how it parses into
// its Settings field.
type Var struct {
	Name    string
	Default string
	Secret  bool
	parse   func(raw string) error
	render  func() string
}

// The patterns compile on first use: at package initialisation they cost
// every start-up about a millisecond, mostly for variables left at their
// defaults.
var (
	identPattern    = security.LazyRegexp(`^[a-z_][a-z0-9_]{0,62}$`)
	toolNamePattern = security.LazyRegexp(`^[A-Za-z0-9_:/.{}+-]{1,128}$`)
	extPattern      = security.LazyRegexp(`^\.[a-z0-9]{1,16}$`)
	hostPattern     = security.LazyRegexp(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`)
)

// text parses a string that passes every check.
func text(name, def string, dst *string, checks ...check) *Var {
	v := &Var{Name: name, Default: def}
	v.parse = func(raw string) error {
		*dst = raw
		return runChecks(checks, raw)
	}
	v.render = func() string { return *dst }
	return v
}

// secretText is text whose value check-config never prints.
func secretText(name, def string, dst *string, checks ...check) *Var {
	v := text(name, def, dst, checks...)
	v.Secret = true
	return v
}

// integer parses a whole number within bounds (at least 1 when none is
// given).
func integer(name, def string, dst *int, bounds ...intRange) *Var {
	v := &Var{Name: name, Default: def}
	lo, hi := 1, int(^uint(0)>>1)
	for _, r := range bounds {
		lo, hi = r.lo, r.hi
	}
	v.parse = func(raw string) error {
		n, err := strconv.Atoi(raw)
		if err != nil {
			return errors.New("must be an integer")
		}
		if n < lo || n > hi {
			return rangeError(lo, hi)
		}
		*dst = n
		return nil
	}
	v.render = func() string { return strconv.Itoa(*dst) }
	return v
}

func rangeError(lo, hi int) error {
	if hi == int(^uint(0)>>1) {
		return fmt.Errorf("must be at least %d", lo)
	}
	return fmt.Errorf("must be between %d and %d", lo, hi)
}

type intRange struct{ lo, hi int }

func between(lo, hi int) intRange { return intRange{lo, hi} }
func atLeast(lo int) intRange     { return intRange{lo, int(^uint(0) >> 1)} }

func seconds(name, def string, dst *float64) *Var {
	v := &Var{Name: name, Default: def}
	v.parse = func(raw string) error {
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || f != f {
			return errors.New("must be a number of seconds")
		}
		if f <= 0 || f > 31536000 {
			return errors.New("must be a positive number of seconds (at most a year)")
		}
		*dst = f
		return nil
	}
	v.render = func() string { return strconv.FormatFloat(*dst, 'f', -1, 64) }
	return v
}

func boolean(name, def string, dst *bool) *Var {
	v := &Var{Name: name, Default: def}
	v.parse = func(raw string) error {
		switch strings.ToLower(raw) {
		case "1", "true", "yes", "on":
			*dst = true
		case "0", "false", "no", "off":
			*dst = false
		default:
			return errors.New("must be true or false")
		}
		return nil
	}
	v.render = func() string { return strconv.FormatBool(*dst) }
	return v
}

// list parses a comma-separated list; each item passes every check.
func list(name, def string, dst *[]string, checks ...check) *Var {
	v := &Var{Name: name, Default: def}
	v.parse = func(raw string) error {
		items := splitList(raw)
		for _, it := range items {
			if err := runChecks(checks, it); err != nil {
				return fmt.Errorf("entry %d %s", slices.Index(items, it)+1, err)
			}
		}
		*dst = items
		return nil
	}
	v.render = func() string { return strings.Join(*dst, ",") }
	return v
}

func portList(name, def string, dst *[]int) *Var {
	v := &Var{Name: name, Default: def}
	v.parse = func(raw string) error {
		var ports []int
		for i, it := range splitList(raw) {
			n, err := strconv.Atoi(it)
			if err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("entry %d must be a port between 1 and 65535", i+1)
			}
			if !slices.Contains(ports, n) {
				ports = append(ports, n)
			}
		}
		*dst = ports
		return nil
	}
	v.render = func() string {
		parts := make([]string, len(*dst))
		for i, p := range *dst {
			parts[i] = strconv.Itoa(p)
		}
		return strings.Join(parts, ",")
	}
	return v
}

func (s *Settings) limit(name, def string) *Var {
	v := &Var{Name: name, Default: def}
	v.parse = func(raw string) error {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 1000000 {
			return errors.New("must be a whole number of calls per minute between 1 and 1000000")
		}
		s.Limits[name] = n
		return nil
	}
	v.render = func() string { return strconv.Itoa(s.Limits[name]) }
	return v
}

func splitList(raw string) []string {
	var out []string
	for _, p := range strings.Split(raw, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// check validates a raw value; its error says what the value must be.
type check func(string) error

func runChecks(checks []check, raw string) error {
	for _, c := range checks {
		if err := c(raw); err != nil {
			return err
		}
	}
	return nil
}

// oneOf accepts exactly the listed values (case-insensitive input is not
// accepted: the value is compared as written).
func oneOf(values ...string) check {
	return func(raw string) error {
		if slices.Contains(values, raw) {
			return nil
		}
		return fmt.Errorf("must be one of %s", strings.Join(values, ", "))
	}
}

// optional wraps a check so the empty value passes.
func optional(c check) check {
	return func(raw string) error {
		if raw == "" {
			return nil
		}
		return c(raw)
	}
}

func nonEmpty(raw string) error {
	if raw == "" {
		return errors.New("must not be empty")
	}
	return nil
}

func identifier(raw string) error {
	if !identPattern().MatchString(raw) {
		return errors.New("must be a lowercase SQL identifier (letters, digits, underscore)")
	}
	return nil
}

func extension(raw string) error {
	if !extPattern().MatchString(raw) {
		return errors.New("must be a lowercase file extension like .md")
	}
	return nil
}

func dirName(raw string) error {
	if raw == "." || raw == ".." || strings.ContainsAny(raw, `/\`) || strings.ContainsRune(raw, 0) {
		return errors.New("must be a single directory name")
	}
	return nil
}

func componentName(raw string) error {
	if !toolNamePattern().MatchString(raw) {
		return errors.New("must be a tool, prompt or resource name")
	}
	return nil
}

func hostname(raw string) error {
	h := strings.ToLower(raw)
	if net.ParseIP(strings.Trim(h, "[]")) != nil || hostPattern().MatchString(h) {
		return nil
	}
	return errors.New("must be a host name")
}

// hostPort accepts host:port with a numeric port in range.
func hostPort(raw string) error {
	host, port, err := net.SplitHostPort(raw)
	if err != nil || host == "" {
		return errors.New("must be host:port")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return errors.New("must carry a port between 1 and 65535")
	}
	return hostname(host)
}

// httpURL accepts an absolute http or https URL without credentials,
// query or fragment.
func httpURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an absolute http or https URL")
	}
	if u.User != nil {
		return errors.New("must not carry credentials")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("must not carry a query or fragment")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return errors.New("must carry a port between 1 and 65535")
		}
	}
	return nil
}

// origin accepts scheme://host[:port] with nothing after it.
func origin(raw string) error {
	if err := httpURL(raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	if u.Path != "" && u.Path != "/" {
		return errors.New("must be an origin (scheme://host[:port])")
	}
	return nil
}

// dsn accepts a PostgreSQL DSN, in URL form (postgres://, postgresql://, or
// the SQLAlchemy spelling postgresql+driver://). The value is never echoed:
// it may carry a password.
func dsn(raw string) error {
	scheme, _, ok := strings.Cut(raw, "://")
	if !ok {
		return errors.New("must be a PostgreSQL URL (postgres://, postgresql:// or postgresql+asyncpg://)")
	}
	scheme = strings.ToLower(scheme)
	base, _, _ := strings.Cut(scheme, "+")
	if base != "postgres" && base != "postgresql" {
		return errors.New("names a database engine other than PostgreSQL, which this server does not support")
	}
	if _, err := url.Parse(raw); err != nil {
		return errors.New("is not a well-formed URL")
	}
	return nil
}

func redisURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "unix") {
		return errors.New("must be a redis://, rediss:// or unix:// URL")
	}
	return nil
}

// headerPairs accepts comma-separated key=value pairs.
func headerPairs(raw string) error {
	for _, p := range splitList(raw) {
		k, _, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return errors.New("must be comma-separated key=value pairs")
		}
	}
	return nil
}
