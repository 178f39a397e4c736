// This file is the server-side request forgery (SSRF) policy: which URLs
// are well formed enough to fetch, which ports may be reached, and which
// addresses count as genuinely public. It performs no I/O; the egress
// adapter resolves, dials and calls back into it for every hop and every
// connection.

package security

import (
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Limits on the shape of a URL and its parts.
const (
	// MaxURLLength bounds a URL, a redirect target included, in bytes.
	MaxURLLength = 4096
	// MaxHostLength is the longest DNS name without its trailing dot
	// (RFC 1035 §2.3.4).
	MaxHostLength = 253
	// MaxLabelLength is the longest DNS label (RFC 1035 §2.3.4).
	MaxLabelLength = 63
	// MinPort and MaxPort bound a TCP destination port. url.Parse accepts
	// any run of digits, so the range is checked here.
	MinPort = 1
	MaxPort = 65535
	// PortHTTP and PortHTTPS are the web ports every deployment allows.
	PortHTTP  = 80
	PortHTTPS = 443
	// maxPortDigits is the length of the longest canonical port, "65535".
	maxPortDigits = 5
)

// Rule names the rule that decided. Rules are fixed labels for operators'
// logs; they never carry a caller's URL, host or address.
type Rule string

// Rules that are not address ranges.
const (
	RuleGlobalUnicast    Rule = "global-unicast"
	RuleInvalidAddr      Rule = "invalid-address"
	RuleScopedAddr       Rule = "scoped-address"
	RuleNotGlobalUnicast Rule = "outside-global-unicast"
	RuleEmptyAnswer      Rule = "empty-dns-answer"
	RuleURLTooLong       Rule = "url-too-long"
	RuleControlChar      Rule = "control-character"
	RuleBackslash        Rule = "backslash"
	RuleUnparsable       Rule = "unparsable-url"
	RuleNotAbsolute      Rule = "not-absolute"
	RuleOpaque           Rule = "opaque-url"
	RuleScheme           Rule = "scheme"
	RuleUserinfo         Rule = "userinfo"
	RuleNoHost           Rule = "no-host"
	RuleBadIPLiteral     Rule = "bad-ip-literal"
	RuleZonedLiteral     Rule = "zoned-ip-literal"
	RuleNonASCIIHost     Rule = "non-ascii-host"
	RuleIDNA             Rule = "idna-mapping"
	RuleNonCanonicalIPv4 Rule = "non-canonical-ipv4"
	RuleBadHostName      Rule = "bad-host-name"
	RuleLocalhostName    Rule = "localhost-name"
	RulePortSpelling     Rule = "non-canonical-port"
	RulePortRange        Rule = "port-out-of-range"
	RulePortNotAllowed   Rule = "port-not-allowed"
)

// Decision is the policy's answer about one URL, host, port or address. The
// zero value refuses.
type Decision struct {
	Allowed bool
	// Reason is the caller-safe reason for a refusal; empty when allowed.
	Reason ports.EgressReason
	// Rule names the rule that decided, for operators.
	Rule Rule
}

// Err returns nil for an allowed decision and otherwise a
// *ports.EgressError carrying the reason, with a *RuleError naming the rule
// as its operator-facing cause.
func (d Decision) Err() error {
	if d.Allowed {
		return nil
	}
	reason := d.Reason
	if reason == "" {
		reason = ports.EgressBlockedAddress
	}
	return &ports.EgressError{Reason: reason, Err: &RuleError{Rule: d.Rule}}
}

// RuleError is the cause inside a policy refusal: which rule refused.
type RuleError struct {
	Rule Rule
}

func (e *RuleError) Error() string { return "egress policy refused: " + string(e.Rule) }

var allowed = Decision{Allowed: true, Rule: RuleGlobalUnicast}

func refuse(reason ports.EgressReason, rule Rule) Decision {
	return Decision{Reason: reason, Rule: rule}
}

// addrRange is one special-purpose block and the rule that names it.
type addrRange struct {
	prefix netip.Prefix
	rule   Rule
}

func block(cidr string, rule Rule) addrRange {
	return addrRange{prefix: netip.MustParsePrefix(cidr), rule: rule}
}

// Range rules. More specific blocks come first in the tables so the rule
// that reaches the log is the most telling one.
const (
	RuleMetadata        Rule = "cloud-metadata"
	RuleCloudPlatform   Rule = "cloud-platform"
	RuleThisNetwork     Rule = "this-network"
	RulePrivate         Rule = "private"
	RuleSharedCGNAT     Rule = "shared-address-space"
	RuleLoopback        Rule = "loopback"
	RuleLinkLocal       Rule = "link-local"
	RuleIETFProtocol    Rule = "ietf-protocol-assignments"
	RuleDocumentation   Rule = "documentation"
	Rule6to4Relay       Rule = "6to4-relay-anycast"
	RuleBenchmarking    Rule = "benchmarking"
	RuleMulticast       Rule = "multicast"
	RuleBroadcast       Rule = "limited-broadcast"
	RuleReserved        Rule = "reserved"
	RuleUnspecified     Rule = "unspecified"
	RuleIPv4Compatible  Rule = "ipv4-compatible"
	RuleIPv4Translated  Rule = "ipv4-translated"
	RuleNAT64LocalUse   Rule = "nat64-local-use"
	RuleDiscardOnly     Rule = "discard-only"
	RuleDummyPrefix     Rule = "dummy-prefix"
	RuleORCHID          Rule = "orchid"
	RuleSRv6SID         Rule = "srv6-sid"
	RuleUniqueLocal     Rule = "unique-local"
	RuleSiteLocal       Rule = "site-local"
	RuleEmbeddedIPv4Via Rule = "embedded-ipv4"
)

// ipv4Refused lists every IPv4 block inside the unicast space that is not a
// public destination. Sources: the IANA IPv4 Special-Purpose Address
// Registry (RFC 6890) and the cloud providers' documented platform
// addresses.
var ipv4Refused = []addrRange{
	block("169.254.169.254/32", RuleMetadata),    // AWS, GCP, Azure, OpenStack instance metadata
	block("100.100.100.200/32", RuleMetadata),    // Alibaba Cloud instance metadata
	block("168.63.129.16/32", RuleCloudPlatform), // Azure WireServer (a platform address that looks public)
	block("0.0.0.0/8", RuleThisNetwork),          // RFC 791, RFC 1122 §3.2.1.3
	block("10.0.0.0/8", RulePrivate),             // RFC 1918
	block("100.64.0.0/10", RuleSharedCGNAT),      // RFC 6598
	block("127.0.0.0/8", RuleLoopback),           // RFC 1122 §3.2.1.3
	block("169.254.0.0/16", RuleLinkLocal),       // RFC 3927
	block("172.16.0.0/12", RulePrivate),          // RFC 1918
	block("192.0.0.0/24", RuleIETFProtocol),      // RFC 6890 §2.2.2 (includes 192.0.0.192, Oracle Cloud metadata)
	block("192.0.2.0/24", RuleDocumentation),     // RFC 5737 TEST-NET-1
	block("192.88.99.0/24", Rule6to4Relay),       // RFC 7526 (deprecated relay anycast)
	block("192.168.0.0/16", RulePrivate),         // RFC 1918
	block("198.18.0.0/15", RuleBenchmarking),     // RFC 2544
	block("198.51.100.0/24", RuleDocumentation),  // RFC 5737 TEST-NET-2
	block("203.0.113.0/24", RuleDocumentation),   // RFC 5737 TEST-NET-3
	block("224.0.0.0/4", RuleMulticast),          // RFC 5771
	block("255.255.255.255/32", RuleBroadcast),   // RFC 919, RFC 8190
	block("240.0.0.0/4", RuleReserved),           // RFC 1112 §4
}

// ipv4Unicast is the allowlist: the unicast space 0.0.0.0-223.255.255.255
// (everything below the multicast block). Refused blocks are carved out of it.
var ipv4Unicast = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/1"),
	netip.MustParsePrefix("128.0.0.0/2"),
	netip.MustParsePrefix("192.0.0.0/3"),
}

// ipv6Refused lists the IPv6 special-purpose blocks (IANA IPv6
// Special-Purpose Address Registry, RFC 6890) that are not public
// destinations. The forms that embed an IPv4 address and are unwrapped
// (IPv4-mapped, NAT64 well-known prefix, 6to4, Teredo) are handled before
// this table is consulted.
var ipv6Refused = []addrRange{
	block("fd00:ec2::254/128", RuleMetadata),     // AWS instance metadata over IPv6
	block("::/128", RuleUnspecified),             // RFC 4291 §2.5.2
	block("::1/128", RuleLoopback),               // RFC 4291 §2.5.3
	block("::/96", RuleIPv4Compatible),           // RFC 4291 §2.5.5.1 (deprecated)
	block("::ffff:0:0:0/96", RuleIPv4Translated), // RFC 2765 §2.1 (SIIT)
	block("64:ff9b:1::/48", RuleNAT64LocalUse),   // RFC 8215 (operator-defined mapping)
	block("100::/64", RuleDiscardOnly),           // RFC 6666
	block("100:0:0:1::/64", RuleDummyPrefix),     // RFC 9780
	block("2001:2::/48", RuleBenchmarking),       // RFC 5180
	block("2001:10::/28", RuleORCHID),            // RFC 4843 (deprecated ORCHID)
	block("2001:20::/28", RuleORCHID),            // RFC 7343 ORCHIDv2 (identifiers, not locators)
	block("2001::/23", RuleIETFProtocol),         // RFC 2928
	block("2001:db8::/32", RuleDocumentation),    // RFC 3849
	block("3fff::/20", RuleDocumentation),        // RFC 9637
	block("5f00::/16", RuleSRv6SID),              // RFC 9602
	block("fc00::/7", RuleUniqueLocal),           // RFC 4193
	block("fe80::/10", RuleLinkLocal),            // RFC 4291 §2.5.6
	block("fec0::/10", RuleSiteLocal),            // RFC 3879 (deprecated)
	block("ff00::/8", RuleMulticast),             // RFC 4291 §2.7
}

// ipv6GlobalUnicast is the allowlist: 2000::/3, the only block IANA
// allocates global unicast space from (RFC 4291 §2.4).
var ipv6GlobalUnicast = netip.MustParsePrefix("2000::/3")

// IPv6 forms that carry an IPv4 address, unwrapped and re-checked.
var (
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052 §2.1
	sixToFour      = netip.MustParsePrefix("2002::/16")    // RFC 3056 §2
	teredo         = netip.MustParsePrefix("2001::/32")    // RFC 4380 §4
)

// CheckAddr decides whether addr is a genuinely public unicast address.
// The policy is an allowlist: an address must lie in the global unicast
// space (1.0.0.0-223.255.255.255, 2000::/3) and outside every
// special-purpose block. An IPv6 address that embeds an IPv4 address is
// unwrapped and the IPv4 address is checked in its place: IPv4-mapped
// (::ffff:0:0/96), NAT64 (64:ff9b::/96), 6to4 (2002::/16) and Teredo
// (2001::/32, both the server and the obfuscated client address).
// IPv4-compatible, IPv4-translated and local-use NAT64 addresses have no
// public meaning and are refused whatever they embed. A scoped address
// (with a zone) is refused.
func CheckAddr(addr netip.Addr) Decision {
	switch {
	case !addr.IsValid():
		return refuse(ports.EgressBlockedAddress, RuleInvalidAddr)
	case addr.Zone() != "":
		return refuse(ports.EgressBlockedAddress, RuleScopedAddr)
	case addr.Is4():
		return checkIPv4(addr)
	case addr.Is4In6():
		return checkEmbedded(addr.Unmap())
	}
	b := addr.As16()
	switch {
	case nat64WellKnown.Contains(addr):
		return checkEmbedded(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case sixToFour.Contains(addr):
		return checkEmbedded(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	case teredo.Contains(addr):
		server := netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]})
		if d := checkEmbedded(server); !d.Allowed {
			return d
		}
		// The client address is stored with every bit inverted.
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return checkEmbedded(client)
	}
	for _, r := range ipv6Refused {
		if r.prefix.Contains(addr) {
			return refuse(ports.EgressBlockedAddress, r.rule)
		}
	}
	if !ipv6GlobalUnicast.Contains(addr) {
		return refuse(ports.EgressBlockedAddress, RuleNotGlobalUnicast)
	}
	return allowed
}

func checkIPv4(addr netip.Addr) Decision {
	for _, r := range ipv4Refused {
		if r.prefix.Contains(addr) {
			return refuse(ports.EgressBlockedAddress, r.rule)
		}
	}
	for _, p := range ipv4Unicast {
		if p.Contains(addr) {
			return allowed
		}
	}
	return refuse(ports.EgressBlockedAddress, RuleNotGlobalUnicast)
}

// checkEmbedded checks an IPv4 address found inside an IPv6 one; the rule
// says both that it was embedded and which block refused it.
func checkEmbedded(v4 netip.Addr) Decision {
	d := checkIPv4(v4)
	if !d.Allowed {
		d.Rule = RuleEmbeddedIPv4Via + ":" + d.Rule
	}
	return d
}

// AddrPolicy decides about one address. CheckAddr is the policy; the type
// lets an adapter hold it in a field.
type AddrPolicy func(netip.Addr) Decision

// Answers applies p to a whole DNS answer. The answer is admitted only when
// every address is: one refused address refuses the whole answer, so a name
// cannot place a private address beside a public one and hope the private
// one is dialled. An empty answer is refused as unresolvable.
func (p AddrPolicy) Answers(addrs []netip.Addr) Decision {
	if len(addrs) == 0 {
		return refuse(ports.EgressResolve, RuleEmptyAnswer)
	}
	for _, a := range addrs {
		if d := p(a); !d.Allowed {
			return d
		}
	}
	return allowed
}

// CheckAnswers is CheckAddr applied to a whole DNS answer (see
// AddrPolicy.Answers).
func CheckAnswers(addrs []netip.Addr) Decision {
	return AddrPolicy(CheckAddr).Answers(addrs)
}

// ParseURL applies the lexical rules to a URL and parses it: at most
// MaxURLLength bytes, no control characters (CR and LF included, so nothing
// can be smuggled into a request line or header), and no backslash (which
// WHATWG parsers read as a slash, so other software would see a different
// authority). Structure is checked by CheckURL.
func ParseURL(raw string) (*url.URL, Decision) {
	if d := lexical(raw); !d.Allowed {
		return nil, d
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, refuse(ports.EgressBadURL, RuleUnparsable)
	}
	return u, allowed
}

// ParseRedirect resolves a Location header value against the URL that
// answered with it, after the same lexical rules as ParseURL.
func ParseRedirect(base *url.URL, location string) (*url.URL, Decision) {
	if base == nil || location == "" {
		return nil, refuse(ports.EgressBadURL, RuleUnparsable)
	}
	ref, d := ParseURL(location)
	if !d.Allowed {
		return nil, d
	}
	u := base.ResolveReference(ref)
	if len(u.String()) > MaxURLLength {
		return nil, refuse(ports.EgressBadURL, RuleURLTooLong)
	}
	return u, allowed
}

func lexical(raw string) Decision {
	if len(raw) > MaxURLLength {
		return refuse(ports.EgressBadURL, RuleURLTooLong)
	}
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c < 0x20 || c == 0x7f:
			return refuse(ports.EgressBadURL, RuleControlChar)
		case c == '\\':
			return refuse(ports.EgressBadURL, RuleBackslash)
		}
	}
	return allowed
}

// HostMapper converts a non-ASCII host name to the ASCII form the HTTP
// client would dial (the IDNA UTS #46 lookup mapping, which turns
// full-width digits and ideographic full stops into ASCII). The core has no
// IDNA implementation of its own; the egress adapter supplies one. A nil
// mapper refuses non-ASCII hosts.
type HostMapper func(host string) (string, error)

// Target is where a URL points once every structural rule passed.
type Target struct {
	// URL is a copy of the URL with its host rewritten to the normalised
	// ASCII form (the port kept only when it was explicit) and the fragment
	// removed: exactly what is requested.
	URL *url.URL
	// Host is the normalised host: a lower-case ASCII DNS name without a
	// trailing dot, or an IP literal in canonical form without brackets.
	Host string
	// Addr is the literal address when Host is an IP literal.
	Addr netip.Addr
	// Port is the destination port, explicit or the scheme's default.
	Port int
}

// HostPort returns the exact host:port pair ("[2001:db8::1]:443" for IPv6).
func (t Target) HostPort() string {
	return JoinHostPort(t.Host, t.Port)
}

// JoinHostPort joins a normalised host and a port, bracketing IPv6.
func JoinHostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}

// CheckURL applies the structural rules to a parsed URL: an absolute http or
// https URL with an authority, no userinfo (so "http://good@evil" and
// "http://evil%2f@good" are refused rather than interpreted), a canonical
// numeric port in 1..65535, and a host that normalises (see NormalizeHost).
// It does not decide whether the destination may be reached: see
// CheckPort, CheckHostName and CheckAddr.
func CheckURL(u *url.URL, toASCII HostMapper) (Target, Decision) {
	if u == nil {
		return Target{}, refuse(ports.EgressBadURL, RuleUnparsable)
	}
	if u.Scheme == "" {
		return Target{}, refuse(ports.EgressBadURL, RuleNotAbsolute)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return Target{}, refuse(ports.EgressScheme, RuleScheme)
	}
	if u.Opaque != "" {
		return Target{}, refuse(ports.EgressBadURL, RuleOpaque)
	}
	if u.User != nil {
		return Target{}, refuse(ports.EgressCredentials, RuleUserinfo)
	}
	if u.Host == "" {
		return Target{}, refuse(ports.EgressBadURL, RuleNoHost)
	}
	explicit := u.Port()
	port, d := parsePort(explicit, scheme)
	if !d.Allowed {
		return Target{}, d
	}
	host, addr, d := NormalizeHost(u.Hostname(), toASCII)
	if !d.Allowed {
		return Target{}, d
	}
	out := *u
	out.Scheme = scheme
	out.Host = host
	if addr.Is6() {
		out.Host = "[" + host + "]"
	}
	if explicit != "" {
		out.Host += ":" + strconv.Itoa(port)
	}
	out.Fragment, out.RawFragment = "", ""
	return Target{URL: &out, Host: host, Addr: addr, Port: port}, allowed
}

// parsePort reads an explicit port (digits only: url.Parse guarantees that)
// or takes the scheme's default. Leading zeros and values outside
// MinPort..MaxPort are refused.
func parsePort(p, scheme string) (int, Decision) {
	if p == "" {
		if scheme == "https" {
			return PortHTTPS, allowed
		}
		return PortHTTP, allowed
	}
	if len(p) > maxPortDigits || (len(p) > 1 && p[0] == '0') {
		return 0, refuse(ports.EgressPortNotAllowed, RulePortSpelling)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return 0, refuse(ports.EgressBadURL, RuleUnparsable)
	}
	if n < MinPort || n > MaxPort {
		return 0, refuse(ports.EgressPortNotAllowed, RulePortRange)
	}
	return n, allowed
}

// NormalizeHost turns a URL host (brackets already removed, as
// url.URL.Hostname returns it) into the form that will be dialled and
// checked: non-ASCII mapped to ASCII with toASCII, lower-cased, one trailing
// dot removed. An IP literal comes back in canonical form with its address.
// Refused: a zone, an IPv4 address in anything but canonical dotted-decimal
// (decimal "2130706433", octal "0177.0.0.1", hex "0x7f.1", short "127.1":
// any host whose last label is a number, which some resolvers turn into an
// address without asking DNS), and names that are not plain LDH labels
// (underscore tolerated) within the RFC 1035 lengths.
func NormalizeHost(host string, toASCII HostMapper) (string, netip.Addr, Decision) {
	if host == "" {
		return "", netip.Addr{}, refuse(ports.EgressBadURL, RuleNoHost)
	}
	if strings.Contains(host, ":") {
		// Only an IPv6 literal can hold a colon once the port is split off.
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return "", netip.Addr{}, refuse(ports.EgressBadURL, RuleBadIPLiteral)
		}
		if a.Zone() != "" {
			return "", netip.Addr{}, refuse(ports.EgressBadURL, RuleZonedLiteral)
		}
		return a.String(), a, allowed
	}
	if !isASCII(host) {
		if toASCII == nil {
			return "", netip.Addr{}, refuse(ports.EgressBadURL, RuleNonASCIIHost)
		}
		mapped, err := toASCII(host)
		if err != nil || !isASCII(mapped) {
			return "", netip.Addr{}, refuse(ports.EgressBadURL, RuleIDNA)
		}
		host = mapped
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || len(host) > MaxHostLength {
		return "", netip.Addr{}, refuse(ports.EgressBadURL, RuleBadHostName)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !a.Is4() {
			return "", netip.Addr{}, refuse(ports.EgressBadURL, RuleBadIPLiteral)
		}
		return a.String(), a, allowed
	}
	if EndsInNumber(host) {
		return "", netip.Addr{}, refuse(ports.EgressBadURL, RuleNonCanonicalIPv4)
	}
	for label := range strings.SplitSeq(host, ".") {
		if !validLabel(label) {
			return "", netip.Addr{}, refuse(ports.EgressBadURL, RuleBadHostName)
		}
	}
	return host, netip.Addr{}, allowed
}

// EndsInNumber reports whether host's last label is a number in any base
// inet_aton accepts (all decimal digits, or 0x followed by hex digits), the
// WHATWG URL "ends in a number" test. No top-level domain is numeric
// (RFC 3696 §2), so such a host is either a canonical dotted quad or an
// address spelling meant to slip past a string check.
func EndsInNumber(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if allOf(last, isDigit) {
		return true
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		return allOf(last[2:], isHexDigit)
	}
	return false
}

func validLabel(l string) bool {
	if l == "" || len(l) > MaxLabelLength {
		return false
	}
	return allOf(l, func(c byte) bool {
		return isDigit(c) || (c >= 'a' && c <= 'z') || c == '-' || c == '_'
	})
}

func allOf(s string, pred func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !pred(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// CheckPort decides whether port may be reached: 80, 443, or one of extra
// (the deployment's ARROWHEAD_EGRESS_ALLOWED_PORTS). Keeping to the web
// ports stops a public host being used to reach a non-web service.
func CheckPort(port int, extra []int) Decision {
	if port < MinPort || port > MaxPort {
		return refuse(ports.EgressPortNotAllowed, RulePortRange)
	}
	if port == PortHTTP || port == PortHTTPS || slices.Contains(extra, port) {
		return allowed
	}
	return refuse(ports.EgressPortNotAllowed, RulePortNotAllowed)
}

// localhostNames are names that resolve to loopback without DNS: RFC 6761
// §6.3 reserves localhost and everything under it, and the rest are the
// loopback aliases common /etc/hosts files carry.
var localhostNames = []string{"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}

// CheckHostName refuses, by name, hosts that denote this machine whatever a
// resolver says (a normalised host is expected). Addresses are decided by
// CheckAddr; this is the name-level guard in front of it.
func CheckHostName(host string) Decision {
	if slices.Contains(localhostNames, host) || strings.HasSuffix(host, ".localhost") {
		return refuse(ports.EgressBlockedAddress, RuleLocalhostName)
	}
	return allowed
}
