package settings

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Var is one configuration variable: name, default, and how it parses into
// its Settings field, plus what the reference documentation says of it.
type Var struct {
	Name    string
	Default string
	Secret  bool
	// Section is the part of the configuration reference the variable is
	// listed under (the seed's sections, in the seed's order).
	Section Section
	// Meaning is one sentence on what the variable does.
	Meaning string
	// Type is the kind of value ("integer", "list", ...).
	Type string
	// What Rule states, kept as the parser's own checks and bounds and put
	// into words only when asked, so loading builds no documentation text.
	rule    string  // fixed wording
	checks  []check // every value's (or, with entries, every entry's)
	entries bool
	bounds  intRange
	bounded bool
	parse   func(raw string) error
	// render is the effective value; Effective prints it.
	render func() string
	// dst points at the Settings field parse sets (Fill reads it); nil
	// for the per-minute ceilings, which are kept in Settings.Limits.
	dst any
	// defaultElsewhere marks a variable whose default is written in
	// another package (a tool's own ceiling, in its definition): unset, Load
	// leaves it alone and the reader applies that default.
	defaultElsewhere bool
}

// Rule says what a valid value must be, as the parser checks it ("" when
// any value is).
func (v *Var) Rule() string {
	switch {
	case v.bounded:
		return rangeRule(v.bounds.lo, v.bounds.hi)
	case v.entries:
		if r := rules(v.checks); r != "" {
			return "comma-separated; each entry " + r
		}
		return "comma-separated"
	case len(v.checks) > 0:
		return rules(v.checks)
	}
	return v.rule
}

// means sets the variable's one-sentence meaning.
func (v *Var) means(meaning string) *Var {
	v.Meaning = meaning
	return v
}

// The patterns compile on first use: at package initialisation they cost
// every start-up about a millisecond, mostly for variables left at their
// defaults.
var (
	toolNamePattern = security.LazyRegexp(`^[A-Za-z0-9_:/.{}+-]{1,128}$`)
	extPattern      = security.LazyRegexp(`^\.[a-z0-9]{1,16}$`)
	hostPattern     = security.LazyRegexp(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`)
)

// text parses a string that passes every check.
func text(name, def string, dst *string, checks ...check) *Var {
	v := &Var{Name: name, Default: def, Type: "string", checks: checks, dst: dst}
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
	lo, hi := 1, int(^uint(0)>>1)
	for _, r := range bounds {
		lo, hi = r.lo, r.hi
	}
	v := &Var{Name: name, Default: def, Type: "integer", bounds: intRange{lo, hi}, bounded: true, dst: dst}
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

func rangeError(lo, hi int) error { return errors.New("must be " + rangeRule(lo, hi)) }

func rangeRule(lo, hi int) string {
	if hi == int(^uint(0)>>1) {
		return fmt.Sprintf("at least %d", lo)
	}
	return fmt.Sprintf("between %d and %d", lo, hi)
}

type intRange struct{ lo, hi int }

func between(lo, hi int) intRange { return intRange{lo, hi} }
func atLeast(lo int) intRange     { return intRange{lo, int(^uint(0) >> 1)} }

func seconds(name, def string, dst *float64) *Var {
	v := &Var{Name: name, Default: def, Type: "seconds", rule: "more than 0, at most 31536000 (a year)", dst: dst}
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
	v := &Var{Name: name, Default: def, Type: "boolean", rule: "true or false (also 1/0, yes/no, on/off)", dst: dst}
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
	v := &Var{Name: name, Default: def, Type: "list", checks: checks, entries: true, dst: dst}
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

// secretList is a list whose values check-config never prints.
func secretList(name, def string, dst *[]string, checks ...check) *Var {
	v := list(name, def, dst, checks...)
	v.Secret = true
	return v
}

func portList(name, def string, dst *[]int) *Var {
	v := &Var{Name: name, Default: def, Type: "list", rule: "comma-separated; each entry a port between 1 and 65535", dst: dst}
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
	v := &Var{Name: name, Default: def, Type: "calls per minute", rule: "between 1 and 1000000"}
	v.parse = func(raw string) error {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 1000000 {
			return errors.New("must be a whole number of calls per minute between 1 and 1000000")
		}
		s.Limits[name] = n
		return nil
	}
	v.render = func() string {
		if n, ok := s.Limits[name]; ok {
			return strconv.Itoa(n)
		}
		return def
	}
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

// check validates a raw value: its error says what the value must be, and
// its rule says the same for the reference documentation.
type check struct {
	rule string
	test func(string) error
}

func runChecks(checks []check, raw string) error {
	for _, c := range checks {
		if err := c.test(raw); err != nil {
			return err
		}
	}
	return nil
}

// rules joins the checks' rules, in the order they run.
func rules(checks []check) string {
	parts := make([]string, len(checks))
	for i, c := range checks {
		parts[i] = c.rule
	}
	return strings.Join(parts, "; ")
}

// oneOf accepts exactly the listed values (case-insensitive input is not
// accepted: the value is compared as written).
func oneOf(values ...string) check {
	return check{"one of " + strings.Join(values, ", "), func(raw string) error {
		if slices.Contains(values, raw) {
			return nil
		}
		return fmt.Errorf("must be one of %s", strings.Join(values, ", "))
	}}
}

// optional wraps a check so the empty value passes.
func optional(c check) check {
	return check{"empty, or " + c.rule, func(raw string) error {
		if raw == "" {
			return nil
		}
		return c.test(raw)
	}}
}

var nonEmpty = check{"not empty", func(raw string) error {
	if raw == "" {
		return errors.New("must not be empty")
	}
	return nil
}}

var identifier = check{"a lowercase SQL identifier (letters, digits, underscore)", func(raw string) error {
	if !ports.ValidVectorIdentifier(raw) {
		return errors.New("must be a lowercase SQL identifier (letters, digits, underscore)")
	}
	return nil
}}

var extension = check{"a lowercase file extension such as .md", func(raw string) error {
	if !extPattern().MatchString(raw) {
		return errors.New("must be a lowercase file extension like .md")
	}
	return nil
}}

var dirName = check{"a single directory name", func(raw string) error {
	if raw == "." || raw == ".." || strings.ContainsAny(raw, `/\`) || strings.ContainsRune(raw, 0) {
		return errors.New("must be a single directory name")
	}
	return nil
}}

var fileName = check{"a single file name", func(raw string) error {
	if raw == "" || raw == "." || raw == ".." || strings.ContainsAny(raw, `/\`) || strings.ContainsFunc(raw, unicode.IsControl) {
		return errors.New("must be a single file name")
	}
	return nil
}}

var componentName = check{"a tool, prompt or resource name", func(raw string) error {
	if !toolNamePattern().MatchString(raw) {
		return errors.New("must be a tool, prompt or resource name")
	}
	return nil
}}

var hostname = check{"a host name or IP address", isHostname}

func isHostname(raw string) error {
	h := strings.ToLower(raw)
	if net.ParseIP(strings.Trim(h, "[]")) != nil || hostPattern().MatchString(h) {
		return nil
	}
	return errors.New("must be a host name")
}

// hostPort accepts host:port with a numeric port in range.
var hostPort = check{"host:port", isHostPort}

func isHostPort(raw string) error {
	host, port, err := net.SplitHostPort(raw)
	if err != nil || host == "" {
		return errors.New("must be host:port")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return errors.New("must carry a port between 1 and 65535")
	}
	return isHostname(host)
}

// httpURL accepts an absolute http or https URL without credentials,
// query or fragment.
var httpURL = check{"an absolute http or https URL without credentials, query or fragment", isHTTPURL}

func isHTTPURL(raw string) error {
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
var origin = check{"an origin (http or https scheme://host[:port])", isOrigin}

func isOrigin(raw string) error {
	if err := isHTTPURL(raw); err != nil {
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
var dsn = check{"a PostgreSQL URL (postgres://, postgresql:// or postgresql+driver://)", func(raw string) error {
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
}}

var redisURL = check{"a redis://, rediss:// or unix:// URL", func(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "unix") {
		return errors.New("must be a redis://, rediss:// or unix:// URL")
	}
	return nil
}}

// headerPairs accepts comma-separated key=value pairs.
var headerPairs = check{"comma-separated key=value pairs", func(raw string) error {
	for _, p := range splitList(raw) {
		k, _, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return errors.New("must be comma-separated key=value pairs")
		}
	}
	return nil
}}
