// This file is the operator's URL-prefix allowlist (ARROWHEAD_NOTIFY_ALLOWLIST):
// which destinations a deliberate egress channel such as notify_webhook may
// address at all. It compares parsed components, never strings: a target
// matches an entry only when its scheme, normalised host and effective port
// are equal and its path lies under the entry's path on a segment boundary.
// Matching decides only the destination the operator approved; the egress
// path still resolves, classifies and pins the address.

package security

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// URLPrefix is one parsed allowlist entry.
type URLPrefix struct {
	Scheme string
	// Host is normalised as CheckURL does (lower-case ASCII, no trailing
	// dot; IP literals canonical, without brackets).
	Host string
	// Port is the effective port: explicit, or the scheme's default.
	Port int
	// Path is the escaped path prefix without a trailing slash ("" for the
	// whole origin).
	Path string
}

// URLAllowlist is a parsed allowlist. The zero value admits nothing.
type URLAllowlist struct {
	entries []URLPrefix
}

// Errors from ParseURLAllowlist. Their text names no entry, so an operator
// log line never repeats a webhook secret carried in a path.
var (
	ErrAllowlistEntry = errors.New("each entry must be an absolute http or https URL prefix without credentials, query, fragment, dot segments or encoded separators")
)

// ParseURLAllowlist parses every entry; the first malformed one fails the
// whole list (a typo must not silently widen or narrow egress). The error
// carries the entry's 1-based position, never its text.
func ParseURLAllowlist(entries []string) (URLAllowlist, error) {
	var out URLAllowlist
	for i, raw := range entries {
		p, err := parsePrefix(strings.TrimSpace(raw))
		if err != nil {
			return URLAllowlist{}, fmt.Errorf("entry %d: %w", i+1, err)
		}
		out.entries = append(out.entries, p)
	}
	return out, nil
}

// Len is the number of entries.
func (l URLAllowlist) Len() int { return len(l.entries) }

func parsePrefix(raw string) (URLPrefix, error) {
	u, d := ParseURL(raw)
	if !d.Allowed || u.RawQuery != "" || u.ForceQuery || strings.Contains(raw, "#") {
		return URLPrefix{}, ErrAllowlistEntry
	}
	t, d := CheckURL(u, nil)
	if !d.Allowed {
		return URLPrefix{}, ErrAllowlistEntry
	}
	path, ok := cleanPrefixPath(u.EscapedPath())
	if !ok {
		return URLPrefix{}, ErrAllowlistEntry
	}
	return URLPrefix{Scheme: t.URL.Scheme, Host: t.Host, Port: t.Port, Path: path}, nil
}

// Match reports whether raw is under one of the entries. A URL the egress
// policy would refuse structurally (userinfo, control characters, bad
// ports, non-ASCII hosts) never matches, nor does one whose path holds dot
// segments, encoded slashes, backslashes or encoded dots, since those are
// read differently by different servers and proxies.
func (l URLAllowlist) Match(raw string) bool {
	if len(l.entries) == 0 || strings.Contains(raw, "#") {
		return false
	}
	u, d := ParseURL(raw)
	if !d.Allowed {
		return false
	}
	t, d := CheckURL(u, nil)
	if !d.Allowed {
		return false
	}
	path, ok := cleanTargetPath(u.EscapedPath())
	if !ok {
		return false
	}
	for _, e := range l.entries {
		if e.Scheme == t.URL.Scheme && e.Host == t.Host && e.Port == t.Port && underPrefix(path, e.Path) {
			return true
		}
	}
	return false
}

// underPrefix is a segment-boundary prefix test: "/hooks" covers "/hooks"
// and "/hooks/a" but not "/hooksevil".
func underPrefix(path, prefix string) bool {
	if prefix == "" {
		return true
	}
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// cleanPrefixPath validates an entry's escaped path and drops a trailing
// slash, so "https://h/hooks/" and "https://h/hooks" mean the same prefix.
func cleanPrefixPath(p string) (string, bool) {
	if !safeEscapedPath(p) {
		return "", false
	}
	return strings.TrimRight(p, "/"), true
}

// cleanTargetPath validates a target's escaped path; "" and "/" are the
// root.
func cleanTargetPath(p string) (string, bool) {
	if !safeEscapedPath(p) {
		return "", false
	}
	if p == "/" {
		return "", true
	}
	return p, true
}

// safeEscapedPath refuses what servers normalise differently: empty or dot
// segments (raw or percent-encoded), encoded slashes and backslashes, and a
// percent sign that does not start a valid escape.
func safeEscapedPath(p string) bool {
	if p == "" || p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return false
	}
	lower := strings.ToLower(p)
	for _, enc := range []string{"%2f", "%5c", "%2e", "%00"} {
		if strings.Contains(lower, enc) {
			return false
		}
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '%' && (i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2])) {
			return false
		}
	}
	segs := strings.Split(strings.TrimSuffix(p[1:], "/"), "/")
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// Hosts lists the distinct hosts the entries name, for an egress path that
// should reach nothing else.
func (l URLAllowlist) Hosts() []string {
	var out []string
	for _, e := range l.entries {
		if !slices.Contains(out, e.Host) {
			out = append(out, e.Host)
		}
	}
	return out
}

// Ports lists the distinct effective ports other than 80 and 443 the
// entries name: the egress path admits only those beside the web ports.
func (l URLAllowlist) Ports() []int {
	var out []int
	for _, e := range l.entries {
		if e.Port != PortHTTP && e.Port != PortHTTPS && !slices.Contains(out, e.Port) {
			out = append(out, e.Port)
		}
	}
	return out
}
