package security

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

// addrCases is the address-classification table. Every row names the
// document that makes the address public or not.
var addrCases = []struct {
	addr string
	ok   bool
	rule Rule // expected rule for refusals ("" skips the rule check)
	ref  string
}{
	// Public unicast, both families.
	{"8.8.8.8", true, "", "RFC 791: ordinary unicast"},
	{"1.1.1.1", true, "", "RFC 791: ordinary unicast"},
	{"93.184.216.34", true, "", "RFC 791: ordinary unicast"},
	{"1.0.0.0", true, "", "RFC 791: lowest address outside 0/8"},
	{"223.255.255.255", true, "", "RFC 5771: highest address below multicast"},
	{"100.63.255.255", true, "", "RFC 6598: just below 100.64/10"},
	{"100.128.0.0", true, "", "RFC 6598: just above 100.64/10"},
	{"172.15.255.255", true, "", "RFC 1918: just below 172.16/12"},
	{"172.32.0.0", true, "", "RFC 1918: just above 172.16/12"},
	{"192.0.1.1", true, "", "RFC 6890: just above 192.0.0.0/24"},
	{"192.31.196.1", true, "", "RFC 7535: AS112-v4 is globally reachable"},
	{"198.17.255.255", true, "", "RFC 2544: just below 198.18/15"},
	{"198.20.0.0", true, "", "RFC 2544: just above 198.18/15"},
	{"169.253.255.255", true, "", "RFC 3927: just below 169.254/16"},
	{"2606:4700:4700::1111", true, "", "RFC 4291 §2.4: global unicast 2000::/3"},
	{"2a00:1450:4001:81c::200e", true, "", "RFC 4291 §2.4: global unicast 2000::/3"},
	{"2620:4f:8000::1", true, "", "RFC 7534: AS112 direct delegation is globally reachable"},

	// Cloud metadata and platform addresses.
	{"169.254.169.254", false, RuleMetadata, "AWS/GCP/Azure/OpenStack instance metadata (RFC 3927 block)"},
	{"100.100.100.200", false, RuleMetadata, "Alibaba Cloud metadata (RFC 6598 block)"},
	{"168.63.129.16", false, RuleCloudPlatform, "Azure WireServer platform address"},
	{"192.0.0.192", false, RuleIETFProtocol, "Oracle Cloud metadata (RFC 6890 §2.2.2 block)"},
	{"fd00:ec2::254", false, RuleMetadata, "AWS IMDS IPv6 (RFC 4193 block)"},

	// IPv4 special-purpose blocks.
	{"0.0.0.0", false, RuleThisNetwork, "RFC 1122 §3.2.1.3: this host"},
	{"0.1.2.3", false, RuleThisNetwork, "RFC 791: this network 0/8"},
	{"10.0.0.1", false, RulePrivate, "RFC 1918: 10/8"},
	{"10.255.255.255", false, RulePrivate, "RFC 1918: 10/8"},
	{"172.16.0.1", false, RulePrivate, "RFC 1918: 172.16/12"},
	{"172.31.255.255", false, RulePrivate, "RFC 1918: 172.16/12"},
	{"192.168.1.1", false, RulePrivate, "RFC 1918: 192.168/16"},
	{"100.64.0.1", false, RuleSharedCGNAT, "RFC 6598: shared address space"},
	{"100.127.255.255", false, RuleSharedCGNAT, "RFC 6598: shared address space"},
	{"127.0.0.1", false, RuleLoopback, "RFC 1122 §3.2.1.3: loopback"},
	{"127.255.255.254", false, RuleLoopback, "RFC 1122 §3.2.1.3: loopback 127/8"},
	{"169.254.0.1", false, RuleLinkLocal, "RFC 3927: link-local"},
	{"192.0.0.9", false, RuleIETFProtocol, "RFC 7723: PCP anycast inside 192.0.0.0/24"},
	{"192.0.2.1", false, RuleDocumentation, "RFC 5737: TEST-NET-1"},
	{"198.51.100.7", false, RuleDocumentation, "RFC 5737: TEST-NET-2"},
	{"203.0.113.9", false, RuleDocumentation, "RFC 5737: TEST-NET-3"},
	{"192.88.99.1", false, Rule6to4Relay, "RFC 7526: deprecated 6to4 relay anycast"},
	{"198.18.0.1", false, RuleBenchmarking, "RFC 2544: benchmarking"},
	{"198.19.255.255", false, RuleBenchmarking, "RFC 2544: benchmarking 198.18/15"},
	{"224.0.0.1", false, RuleMulticast, "RFC 5771: multicast"},
	{"239.255.255.250", false, RuleMulticast, "RFC 2365: administratively scoped multicast"},
	{"240.0.0.1", false, RuleReserved, "RFC 1112 §4: reserved class E"},
	{"255.255.255.254", false, RuleReserved, "RFC 1112 §4: reserved class E"},
	{"255.255.255.255", false, RuleBroadcast, "RFC 919, RFC 8190: limited broadcast"},

	// IPv6 special-purpose blocks.
	{"::", false, RuleUnspecified, "RFC 4291 §2.5.2: unspecified"},
	{"::1", false, RuleLoopback, "RFC 4291 §2.5.3: loopback"},
	{"fc00::1", false, RuleUniqueLocal, "RFC 4193: unique local fc00::/7"},
	{"fdff:ffff::1", false, RuleUniqueLocal, "RFC 4193: unique local fc00::/7"},
	{"fe80::1", false, RuleLinkLocal, "RFC 4291 §2.5.6: link-local"},
	{"febf::1", false, RuleLinkLocal, "RFC 4291 §2.5.6: link-local fe80::/10"},
	{"fec0::1", false, RuleSiteLocal, "RFC 3879: deprecated site-local"},
	{"ff02::1", false, RuleMulticast, "RFC 4291 §2.7: multicast"},
	{"ff0e::1", false, RuleMulticast, "RFC 4291 §2.7: global-scope multicast is still multicast"},
	{"2001:db8::1", false, RuleDocumentation, "RFC 3849: documentation"},
	{"3fff::1", false, RuleDocumentation, "RFC 9637: documentation 3fff::/20"},
	{"2001:10::1", false, RuleORCHID, "RFC 4843: ORCHID"},
	{"2001:20::1", false, RuleORCHID, "RFC 7343: ORCHIDv2"},
	{"2001:2::1", false, RuleBenchmarking, "RFC 5180: benchmarking"},
	{"2001:1::1", false, RuleIETFProtocol, "RFC 2928: IETF protocol assignments"},
	{"100::1", false, RuleDiscardOnly, "RFC 6666: discard-only"},
	{"100:0:0:1::1", false, RuleDummyPrefix, "RFC 9780: dummy prefix"},
	{"5f00::1", false, RuleSRv6SID, "RFC 9602: SRv6 SIDs"},
	{"64:ff9b:1::808:808", false, RuleNAT64LocalUse, "RFC 8215: local-use NAT64, operator-defined"},
	{"64:ff9b:1::a9fe:a9fe", false, RuleNAT64LocalUse, "RFC 8215: local-use NAT64 carrying metadata"},
	{"4000::1", false, RuleNotGlobalUnicast, "RFC 4291 §2.4: outside 2000::/3"},
	{"1::1", false, RuleNotGlobalUnicast, "RFC 4291 §2.4: outside 2000::/3"},
	{"::2", false, RuleIPv4Compatible, "RFC 4291 §2.5.5.1: IPv4-compatible (deprecated)"},

	// IPv4 embedded in IPv6: unwrapped and re-checked.
	{"::ffff:8.8.8.8", true, "", "RFC 4291 §2.5.5.2: IPv4-mapped public"},
	{"::ffff:169.254.169.254", false, RuleEmbeddedIPv4Via + ":" + RuleMetadata, "RFC 4291 §2.5.5.2: IPv4-mapped metadata"},
	{"::ffff:127.0.0.1", false, RuleEmbeddedIPv4Via + ":" + RuleLoopback, "RFC 4291 §2.5.5.2: IPv4-mapped loopback"},
	{"::ffff:10.0.0.1", false, RuleEmbeddedIPv4Via + ":" + RulePrivate, "RFC 4291 §2.5.5.2: IPv4-mapped private"},
	{"::ffff:0.0.0.0", false, RuleEmbeddedIPv4Via + ":" + RuleThisNetwork, "RFC 4291 §2.5.5.2: IPv4-mapped this-host"},
	{"::169.254.169.254", false, RuleIPv4Compatible, "RFC 4291 §2.5.5.1: IPv4-compatible metadata"},
	{"::8.8.8.8", false, RuleIPv4Compatible, "RFC 4291 §2.5.5.1: IPv4-compatible has no public meaning"},
	{"::ffff:0:a9fe:a9fe", false, RuleIPv4Translated, "RFC 2765 §2.1: IPv4-translated metadata"},
	{"::ffff:0:808:808", false, RuleIPv4Translated, "RFC 2765 §2.1: IPv4-translated has no public meaning"},
	{"64:ff9b::808:808", true, "", "RFC 6052 §2.1: NAT64 well-known prefix, public"},
	{"64:ff9b::a9fe:a9fe", false, RuleEmbeddedIPv4Via + ":" + RuleMetadata, "RFC 6052 §3.1: NAT64 metadata"},
	{"64:ff9b::7f00:1", false, RuleEmbeddedIPv4Via + ":" + RuleLoopback, "RFC 6052 §3.1: NAT64 loopback"},
	{"64:ff9b::a00:1", false, RuleEmbeddedIPv4Via + ":" + RulePrivate, "RFC 6052 §3.1: NAT64 private"},
	{"2002:808:808::1", true, "", "RFC 3056 §2: 6to4 of a public address"},
	{"2002:a9fe:a9fe::1", false, RuleEmbeddedIPv4Via + ":" + RuleMetadata, "RFC 3056 §2: 6to4 metadata"},
	{"2002:7f00:1::", false, RuleEmbeddedIPv4Via + ":" + RuleLoopback, "RFC 3056 §2: 6to4 loopback"},
	{"2002:c0a8:101::1", false, RuleEmbeddedIPv4Via + ":" + RulePrivate, "RFC 3056 §2: 6to4 private"},
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false, RuleEmbeddedIPv4Via + ":" + RuleDocumentation, "RFC 4380 §4: Teredo example, client 192.0.2.45"},
	{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", true, "", "RFC 4380 §4: Teredo, server 65.54.227.120, client 8.8.8.8"},
	{"2001:0:4136:e378:8000:63bf:5601:5601", false, RuleEmbeddedIPv4Via + ":" + RuleMetadata, "RFC 4380 §4: Teredo client ~5601:5601 = 169.254.169.254"},
	{"2001:0:a9fe:a9fe::f7f7:f7f7", false, RuleEmbeddedIPv4Via + ":" + RuleMetadata, "RFC 4380 §4: Teredo server 169.254.169.254"},
	{"2001:0:7f00:1:8000:63bf:f7f7:f7f7", false, RuleEmbeddedIPv4Via + ":" + RuleLoopback, "RFC 4380 §4: Teredo server loopback"},
	{"2001:0:4136:e378:8000:63bf:80ff:fffe", false, RuleEmbeddedIPv4Via + ":" + RuleLoopback, "RFC 4380 §4: Teredo client ~80ff:fffe = 127.0.0.1"},

	// Scoped addresses.
	{"fe80::1%eth0", false, RuleScopedAddr, "RFC 4007 §11: a zone makes the address local"},
	{"2606:4700::1%eth0", false, RuleScopedAddr, "RFC 4007 §11: a zone on a global address is still local routing"},
}

func TestCheckAddr(t *testing.T) {
	for _, tc := range addrCases {
		t.Run(tc.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tc.addr)
			d := CheckAddr(a)
			if d.Allowed != tc.ok {
				t.Fatalf("CheckAddr(%s) allowed=%v (rule %s), want %v [%s]", tc.addr, d.Allowed, d.Rule, tc.ok, tc.ref)
			}
			if tc.ok {
				if d.Reason != "" || d.Err() != nil {
					t.Fatalf("allowed decision carries a refusal: %+v", d)
				}
				return
			}
			if d.Reason != ports.EgressBlockedAddress {
				t.Errorf("reason = %q, want %q", d.Reason, ports.EgressBlockedAddress)
			}
			if tc.rule != "" && d.Rule != tc.rule {
				t.Errorf("rule = %q, want %q [%s]", d.Rule, tc.rule, tc.ref)
			}
		})
	}
}

func TestCheckAddrInvalid(t *testing.T) {
	d := CheckAddr(netip.Addr{})
	if d.Allowed || d.Rule != RuleInvalidAddr {
		t.Fatalf("zero Addr: %+v", d)
	}
}

// TestNetipIsNotAPolicy records why the policy is not built on netip's
// classifiers: each of these reports as global unicast and not private.
func TestNetipIsNotAPolicy(t *testing.T) {
	for _, s := range []string{"100.64.0.1", "198.18.0.1", "192.0.2.1", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::", "::ffff:0:a9fe:a9fe"} {
		a := netip.MustParseAddr(s)
		if !a.IsGlobalUnicast() || a.IsPrivate() {
			continue // netip improved; the policy below must still refuse
		}
		if CheckAddr(a).Allowed {
			t.Errorf("%s: netip calls it global and the policy admitted it", s)
		}
	}
}

func TestCheckAnswers(t *testing.T) {
	addrs := func(ss ...string) []netip.Addr {
		out := make([]netip.Addr, len(ss))
		for i, s := range ss {
			out[i] = netip.MustParseAddr(s)
		}
		return out
	}
	cases := []struct {
		name   string
		in     []netip.Addr
		ok     bool
		reason ports.EgressReason
	}{
		{"all public", addrs("8.8.8.8", "2606:4700:4700::1111"), true, ""},
		{"empty answer", nil, false, ports.EgressResolve},
		{"public then metadata", addrs("8.8.8.8", "169.254.169.254"), false, ports.EgressBlockedAddress},
		{"private first", addrs("10.0.0.1", "8.8.8.8"), false, ports.EgressBlockedAddress},
		{"public v4 with metadata v6", addrs("8.8.8.8", "fd00:ec2::254"), false, ports.EgressBlockedAddress},
		{"mapped answer from the resolver", addrs("::ffff:8.8.8.8"), true, ""},
		{"mapped loopback", addrs("::ffff:127.0.0.1"), false, ports.EgressBlockedAddress},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := CheckAnswers(tc.in)
			if d.Allowed != tc.ok || d.Reason != tc.reason {
				t.Fatalf("CheckAnswers = %+v, want ok=%v reason=%q", d, tc.ok, tc.reason)
			}
		})
	}
}

func TestAddrPolicyAnswersUsesThePolicy(t *testing.T) {
	admitOnly := netip.MustParseAddr("127.0.0.1")
	p := AddrPolicy(func(a netip.Addr) Decision {
		if a == admitOnly {
			return Decision{Allowed: true}
		}
		return CheckAddr(a)
	})
	if !p.Answers([]netip.Addr{admitOnly}).Allowed {
		t.Fatal("custom policy not consulted")
	}
	if p.Answers([]netip.Addr{admitOnly, netip.MustParseAddr("127.0.0.2")}).Allowed {
		t.Fatal("a refused answer beside an admitted one must refuse the whole answer")
	}
}

// asciiOnly stands in for the adapter's IDNA mapper: it maps the few
// Unicode forms the tests use, the way UTS #46 does.
func asciiOnly(s string) (string, error) {
	r := strings.NewReplacer("１", "1", "２", "2", "７", "7", "０", "0", "．", ".", "。", ".", "Ｌ", "l")
	out := r.Replace(s)
	if !isASCII(out) {
		return "", errors.New("unmapped")
	}
	return out, nil
}

func TestNormalizeHost(t *testing.T) {
	cases := []struct {
		in     string
		want   string
		isAddr bool
		rule   Rule // "" means admitted
		ref    string
	}{
		{"Example.COM", "example.com", false, "", "RFC 4343: DNS names compare case-insensitively"},
		{"example.com.", "example.com", false, "", "RFC 1034 §3.1: trailing dot is the root"},
		{"_dmarc.example.com", "_dmarc.example.com", false, "", "RFC 2181 §11: any octet in labels; underscore names exist"},
		{"xn--bcher-kva.de", "xn--bcher-kva.de", false, "", "RFC 5891: A-labels are plain LDH"},
		{"127.0.0.1", "127.0.0.1", true, "", "RFC 3986 §3.2.2: dotted-decimal IPv4address"},
		{"169.254.169.254.", "169.254.169.254", true, "", "RFC 1034 §3.1: trailing dot on a literal"},
		{"2001:DB8::1", "2001:db8::1", true, "", "RFC 5952 §4: canonical IPv6 text"},
		{"::ffff:169.254.169.254", "::ffff:169.254.169.254", true, "", "RFC 4291 §2.5.5.2: mapped literal kept for the address check"},
		{"１２７．０．０．１", "127.0.0.1", true, "", "UTS #46: full-width digits and stops map to ASCII"},
		{"127。0。0。1", "127.0.0.1", true, "", "UTS #46: ideographic full stop maps to a dot"},
		{"ＬＯＣＡＬＨＯＳＴ", "", false, RuleIDNA, "mapper failure refuses"},
		{"2130706433", "", false, RuleNonCanonicalIPv4, "inet_aton: 32-bit decimal"},
		{"0177.0.0.1", "", false, RuleNonCanonicalIPv4, "inet_aton: octal octet"},
		{"0x7f.1", "", false, RuleNonCanonicalIPv4, "inet_aton: hex and short form"},
		{"0x7f000001", "", false, RuleNonCanonicalIPv4, "inet_aton: 32-bit hex"},
		{"127.1", "", false, RuleNonCanonicalIPv4, "inet_aton: a.b short form"},
		{"169.254.43518", "", false, RuleNonCanonicalIPv4, "inet_aton: a.b.c short form"},
		{"127.000.000.001", "", false, RuleNonCanonicalIPv4, "inet_aton: zero-padded octets read as octal"},
		{"0", "", false, RuleNonCanonicalIPv4, "inet_aton: 0 is 0.0.0.0"},
		{"1.2.3.4.5", "", false, RuleNonCanonicalIPv4, "WHATWG URL: ends in a number"},
		{"0x", "", false, RuleNonCanonicalIPv4, "WHATWG URL: 0x alone is a number"},
		{"example.0x1F", "", false, RuleNonCanonicalIPv4, "WHATWG URL: hex last label"},
		{"fe80::1%eth0", "", false, RuleZonedLiteral, "RFC 6874: zones are local"},
		{"1.2.3.4:80", "", false, RuleBadIPLiteral, "a colon means IPv6 only"},
		{"a..b", "", false, RuleBadHostName, "RFC 1035 §2.3.1: empty label"},
		{".", "", false, RuleBadHostName, "root alone is no host"},
		{"a b", "", false, RuleBadHostName, "RFC 1035 §2.3.1: no spaces"},
		{"a/b", "", false, RuleBadHostName, "RFC 3986 §3.2.2: no delimiters"},
		{"a%2fb", "", false, RuleBadHostName, "percent signs never reach the resolver"},
		{strings.Repeat("a", 64) + ".com", "", false, RuleBadHostName, "RFC 1035 §2.3.4: label over 63"},
		{strings.Repeat("a.", 127) + "com", "", false, RuleBadHostName, "RFC 1035 §2.3.4: name over 253"},
		{"", "", false, RuleNoHost, "RFC 3986 §3.2.2: http requires a host"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, addr, d := NormalizeHost(tc.in, asciiOnly)
			if tc.rule != "" {
				if d.Allowed || d.Rule != tc.rule {
					t.Fatalf("NormalizeHost(%q) = %q %+v, want refusal %q [%s]", tc.in, got, d, tc.rule, tc.ref)
				}
				return
			}
			if !d.Allowed {
				t.Fatalf("NormalizeHost(%q) refused: %+v [%s]", tc.in, d, tc.ref)
			}
			if got != tc.want || addr.IsValid() != tc.isAddr {
				t.Fatalf("NormalizeHost(%q) = %q (addr %v), want %q (addr %v)", tc.in, got, addr, tc.want, tc.isAddr)
			}
			if addr.IsValid() && addr.String() != got {
				t.Fatalf("literal host %q does not match its address %v", got, addr)
			}
		})
	}
}

func TestNormalizeHostWithoutMapperRefusesUnicode(t *testing.T) {
	if _, _, d := NormalizeHost("bücher.de", nil); d.Allowed || d.Rule != RuleNonASCIIHost {
		t.Fatalf("got %+v", d)
	}
}

func TestParseAndCheckURL(t *testing.T) {
	cases := []struct {
		raw      string
		reason   ports.EgressReason // "" means admitted
		wantURL  string
		wantHost string
		wantPort int
		ref      string
	}{
		{"http://example.com/a?b=c#frag", "", "http://example.com/a?b=c", "example.com", 80, "RFC 7230 §2.7.1: default port 80"},
		{"https://Example.COM./x", "", "https://example.com/x", "example.com", 443, "RFC 2818: default port 443"},
		{"HTTP://example.com:8080/", "", "http://example.com:8080/", "example.com", 8080, "RFC 3986 §3.1: scheme is case-insensitive"},
		{"http://[2001:DB8::1]:443/", "", "http://[2001:db8::1]:443/", "2001:db8::1", 443, "RFC 3986 §3.2.2: IP-literal"},
		{"http://%EF%BC%91%EF%BC%92%EF%BC%97.0.0.1/", "", "http://127.0.0.1/", "127.0.0.1", 80, "RFC 3986 §3.2.2 + UTS #46: encoded full-width digits"},
		{"http://127。0。0。1:80/", "", "http://127.0.0.1:80/", "127.0.0.1", 80, "UTS #46: ideographic full stops"},
		{"http://example.com:/", "", "http://example.com/", "example.com", 80, "RFC 3986 §3.2.3: empty port means default"},

		{"ftp://example.com/", ports.EgressScheme, "", "", 0, "seed: only http and https"},
		{"file:///etc/passwd", ports.EgressScheme, "", "", 0, "RFC 8089: file scheme"},
		{"gopher://127.0.0.1:6379/_INFO", ports.EgressScheme, "", "", 0, "RFC 4266: gopher smuggles raw TCP"},
		{"javascript:alert(1)", ports.EgressScheme, "", "", 0, "not a network scheme"},
		{"data:text/plain,hi", ports.EgressScheme, "", "", 0, "RFC 2397: data scheme"},
		{"http:example.com", ports.EgressBadURL, "", "", 0, "RFC 3986 §3: no authority"},
		{"//example.com/", ports.EgressBadURL, "", "", 0, "RFC 3986 §4.2: network-path reference is not absolute"},
		{"/relative", ports.EgressBadURL, "", "", 0, "RFC 3986 §4.2: relative reference"},
		{"http:///path", ports.EgressBadURL, "", "", 0, "RFC 7230 §2.7.1: empty host"},
		{"http://good@169.254.169.254/", ports.EgressCredentials, "", "", 0, "RFC 3986 §3.2.1: userinfo"},
		{"http://169.254.169.254%2f@good.example/", ports.EgressCredentials, "", "", 0, "RFC 3986 §3.2.1: encoded slash in userinfo"},
		{"http://@good.example/", ports.EgressCredentials, "", "", 0, "RFC 3986 §3.2.1: empty userinfo"},
		{"http://example.com:0/", ports.EgressPortNotAllowed, "", "", 0, "RFC 6335 §6: port 0 is reserved"},
		{"http://example.com:65536/", ports.EgressPortNotAllowed, "", "", 0, "RFC 793: ports are 16 bits"},
		{"http://example.com:99999/", ports.EgressPortNotAllowed, "", "", 0, "RFC 793: ports are 16 bits"},
		{"http://example.com:080/", ports.EgressPortNotAllowed, "", "", 0, "non-canonical port spelling"},
		{"http://example.com:000000000080/", ports.EgressPortNotAllowed, "", "", 0, "non-canonical port spelling"},
		{"http://example.com:http/", ports.EgressBadURL, "", "", 0, "RFC 3986 §3.2.3: port is digits"},
		{"http://2130706433/", ports.EgressBadURL, "", "", 0, "inet_aton decimal spelling"},
		{"http://0x7f.1/", ports.EgressBadURL, "", "", 0, "inet_aton hex short spelling"},
		{"http://[::1%25eth0]/", ports.EgressBadURL, "", "", 0, "RFC 6874: zone identifier"},
		{"http://%31%32%37.0.0.1/", ports.EgressBadURL, "", "", 0, "RFC 3986 §3.2.2: encoded ASCII in host"},
		{"http://example.com\\@169.254.169.254/", ports.EgressBadURL, "", "", 0, "WHATWG: backslash is a slash"},
		{"http://example.com/\r\nHost: x", ports.EgressBadURL, "", "", 0, "RFC 7230 §3: CRLF injection"},
		{"http://exa\tmple.com/", ports.EgressBadURL, "", "", 0, "RFC 3986 §2: control characters"},
		{"http://example.com/" + strings.Repeat("a", MaxURLLength), ports.EgressBadURL, "", "", 0, "length bound"},
	}
	for _, tc := range cases {
		name := tc.raw
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			u, d := ParseURL(tc.raw)
			var tgt Target
			if d.Allowed {
				tgt, d = CheckURL(u, asciiOnly)
			}
			if tc.reason != "" {
				if d.Allowed || d.Reason != tc.reason {
					t.Fatalf("got %+v, want refusal %q [%s]", d, tc.reason, tc.ref)
				}
				return
			}
			if !d.Allowed {
				t.Fatalf("refused %+v [%s]", d, tc.ref)
			}
			if got := tgt.URL.String(); got != tc.wantURL {
				t.Errorf("URL = %q, want %q", got, tc.wantURL)
			}
			if tgt.Host != tc.wantHost || tgt.Port != tc.wantPort {
				t.Errorf("host:port = %s:%d, want %s:%d", tgt.Host, tgt.Port, tc.wantHost, tc.wantPort)
			}
		})
	}
}

func TestCheckURLDoesNotMutateInput(t *testing.T) {
	u, _ := url.Parse("http://EXAMPLE.com/#x")
	if _, d := CheckURL(u, nil); !d.Allowed {
		t.Fatal(d)
	}
	if u.Host != "EXAMPLE.com" || u.Fragment != "x" {
		t.Fatalf("input mutated: %v", u)
	}
}

func TestParseRedirect(t *testing.T) {
	base, _ := url.Parse("https://public.example/a/b?q=1")
	cases := []struct {
		loc  string
		want string
		ok   bool
	}{
		{"/c", "https://public.example/c", true},
		{"d", "https://public.example/a/d", true},
		{"//169.254.169.254/latest", "https://169.254.169.254/latest", true},
		{"http://other.example/", "http://other.example/", true},
		{"", "", false},
		{"/\\169.254.169.254/", "", false},
		{"/x\r\nSet-Cookie: a=b", "", false},
		{"/" + strings.Repeat("p", MaxURLLength), "", false},
	}
	for _, tc := range cases {
		u, d := ParseRedirect(base, tc.loc)
		if d.Allowed != tc.ok {
			t.Errorf("ParseRedirect(%.40q) allowed=%v, want %v", tc.loc, d.Allowed, tc.ok)
			continue
		}
		if tc.ok && u.String() != tc.want {
			t.Errorf("ParseRedirect(%q) = %q, want %q", tc.loc, u, tc.want)
		}
	}
	if _, d := ParseRedirect(nil, "/x"); d.Allowed {
		t.Error("nil base admitted")
	}
}

func TestEndsInNumber(t *testing.T) {
	cases := map[string]bool{
		"1": true, "127.1": true, "0x7f": true, "0X7F": true, "a.0x": true, "a.b.09": true, "1.2.3.4.": true,
		"example.com": false, "1.2.3.com": false, "0xg": false, "a.": false, "x1": false,
	}
	for host, want := range cases {
		if got := EndsInNumber(host); got != want {
			t.Errorf("EndsInNumber(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestCheckPort(t *testing.T) {
	cases := []struct {
		port  int
		extra []int
		ok    bool
		ref   string
	}{
		{80, nil, true, "RFC 7230 §2.7.1: http"},
		{443, nil, true, "RFC 7230 §2.7.2: https"},
		{8443, []int{8443}, true, "ARROWHEAD_EGRESS_ALLOWED_PORTS"},
		{8080, nil, false, "non-web port not listed"},
		{22, []int{8443}, false, "ssh is never implied"},
		{6379, nil, false, "redis"},
		{0, []int{0}, false, "RFC 6335 §6: port 0 even if listed"},
		{65536, []int{65536}, false, "RFC 793: 16-bit ports"},
	}
	for _, tc := range cases {
		d := CheckPort(tc.port, tc.extra)
		if d.Allowed != tc.ok {
			t.Errorf("CheckPort(%d, %v) = %+v, want ok=%v [%s]", tc.port, tc.extra, d, tc.ok, tc.ref)
		}
		if !d.Allowed && d.Reason != ports.EgressPortNotAllowed {
			t.Errorf("CheckPort(%d) reason %q", tc.port, d.Reason)
		}
	}
}

func TestCheckHostName(t *testing.T) {
	for _, h := range []string{"localhost", "a.localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"} {
		if d := CheckHostName(h); d.Allowed || d.Reason != ports.EgressBlockedAddress {
			t.Errorf("CheckHostName(%q) = %+v, want refusal (RFC 6761 §6.3)", h, d)
		}
	}
	for _, h := range []string{"example.com", "notlocalhost", "localhost.example.com"} {
		if d := CheckHostName(h); !d.Allowed {
			t.Errorf("CheckHostName(%q) refused", h)
		}
	}
}

func TestDecisionErr(t *testing.T) {
	d := refuse(ports.EgressScheme, RuleScheme)
	err := d.Err()
	if ports.EgressReasonOf(err) != ports.EgressScheme {
		t.Fatalf("reason of %v", err)
	}
	var re *RuleError
	if !errors.As(err, &re) || re.Rule != RuleScheme {
		t.Fatalf("cause %v", errors.Unwrap(err))
	}
	if err.Error() != string(ports.EgressScheme) {
		t.Fatalf("caller text %q", err.Error())
	}
	if got := ports.EgressReasonOf(Decision{}.Err()); got != ports.EgressBlockedAddress {
		t.Fatalf("zero decision reason %q", got)
	}
}

func TestTargetHostPort(t *testing.T) {
	if got := (Target{Host: "2001:db8::1", Port: 443}).HostPort(); got != "[2001:db8::1]:443" {
		t.Error(got)
	}
	if got := (Target{Host: "example.com", Port: 80}).HostPort(); got != "example.com:80" {
		t.Error(got)
	}
}

// FuzzCheckURL checks the invariants the egress adapter relies on: an
// admitted target's host is either a canonical literal matching Addr or a
// plain lower-case LDH name that no resolver could read as an address, and
// its port is in range.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"http://example.com/", "http://0x7f.1/", "http://[::ffff:127.0.0.1]:8080/",
		"https://１２７．０．０．１/", "http://a@b/", "http://b:99999/", "http://1.2.3.4./"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, d := ParseURL(raw)
		if !d.Allowed {
			return
		}
		tgt, d := CheckURL(u, asciiOnly)
		if !d.Allowed {
			return
		}
		if tgt.Port < MinPort || tgt.Port > MaxPort {
			t.Fatalf("port %d admitted", tgt.Port)
		}
		if tgt.URL.User != nil || tgt.URL.Fragment != "" {
			t.Fatalf("userinfo or fragment survived: %v", tgt.URL)
		}
		if tgt.Addr.IsValid() {
			if tgt.Addr.String() != tgt.Host || tgt.Addr.Zone() != "" {
				t.Fatalf("literal %q vs %v", tgt.Host, tgt.Addr)
			}
			return
		}
		if _, err := netip.ParseAddr(tgt.Host); err == nil || EndsInNumber(tgt.Host) {
			t.Fatalf("name %q reads as an address", tgt.Host)
		}
		for i := 0; i < len(tgt.Host); i++ {
			c := tgt.Host[i]
			if !(isDigit(c) || (c >= 'a' && c <= 'z') || c == '-' || c == '_' || c == '.') {
				t.Fatalf("name %q has byte %q", tgt.Host, c)
			}
		}
	})
}

func BenchmarkCheckAddr(b *testing.B) {
	addrs := []netip.Addr{
		netip.MustParseAddr("93.184.216.34"),
		netip.MustParseAddr("2606:4700:4700::1111"),
		netip.MustParseAddr("2001:0:4136:e378:8000:63bf:f7f7:f7f7"),
	}
	for b.Loop() {
		for _, a := range addrs {
			_ = CheckAddr(a)
		}
	}
}
