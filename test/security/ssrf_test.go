// The SSRF corpus: testdata/ssrf_payloads.txt and allowlist_payloads.txt run
// against the pure policy, the real egress adapter and the safe_fetch tool.
// Nothing here touches a network: names are answered by a fake resolver
// (testdata/resolver_hosts.txt) and every request runs under an
// already-cancelled context, so a payload that wrongly got past the guard
// fails at the transport (and is reported) instead of connecting anywhere.

package security_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/httpx"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/coretools"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// corpusAllowedHost is the only host of the allowlist corpus's adapter.
const corpusAllowedHost = "api.example.com"

// attackerAddr is what every unlisted name resolves to in the allowlist
// corpus: a public address under the attacker's control.
var attackerAddr = netip.MustParseAddr("93.184.216.99")

// policyReasons are the refusals the guard gives before any connection.
// Resolve, connect and timeout failures are not refusals: a payload that
// ends in one of them got past the policy.
var policyReasons = []ports.EgressReason{
	ports.EgressBadURL, ports.EgressScheme, ports.EgressCredentials,
	ports.EgressHostNotAllowed, ports.EgressPortNotAllowed, ports.EgressBlockedAddress,
}

// payload is one corpus line.
type payload struct {
	line int
	text string
}

func (p payload) name() string {
	n := strconv.Quote(p.text)
	if len(n) > 70 {
		n = n[:70] + "…"
	}
	return fmt.Sprintf("line%d_%s", p.line, n)
}

// loadPayloads reads a corpus file: one payload a line, '#' comments and
// blank lines skipped, q:"..." lines unquoted (for control characters).
func loadPayloads(t *testing.T, file string) []payload {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []payload
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "", strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "q:"):
			s, err := strconv.Unquote(line[2:])
			if err != nil {
				t.Fatalf("%s:%d: bad quoted payload: %v", file, n, err)
			}
			out = append(out, payload{n, s})
		default:
			out = append(out, payload{n, line})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no payloads", file)
	}
	return out
}

// generatedPayloads are those a data file cannot hold comfortably.
func generatedPayloads() []payload {
	return []payload{
		{-1, "http://169.254.169.254/" + strings.Repeat("a", security.MaxURLLength)},
		{-2, "http://example-public.test/?" + strings.Repeat("x=1&", security.MaxURLLength/4+1)},
		{-3, "http://" + strings.Repeat("a", 64) + ".example-public.test/"},
		{-4, "http://" + strings.Repeat("a.", 130) + "example-public.test/"},
		{-5, "http://example-public.test" + strings.Repeat("/..", 2000) + "/169.254.169.254"},
		{-6, "http://１２７．０．０．１/" + strings.Repeat("ｐ", coretools.SafeFetchMaxURLLength)},
	}
}

// corpusResolver answers from resolver_hosts.txt. Unlisted names are
// NXDOMAIN, or the attacker's public address when wildcard is set.
type corpusResolver struct {
	hosts    map[string][]netip.Addr
	wildcard bool
	mu       sync.Mutex
	asked    []string
}

func loadResolver(t *testing.T, wildcard bool) *corpusResolver {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "resolver_hosts.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r := &corpusResolver{hosts: map[string][]netip.Addr{}, wildcard: wildcard}
	for n, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < 2 {
			t.Fatalf("resolver_hosts.txt:%d: a name needs at least one address", n+1)
		}
		for _, f := range fields[1:] {
			a, err := netip.ParseAddr(f)
			if err != nil {
				t.Fatalf("resolver_hosts.txt:%d: %v", n+1, err)
			}
			r.hosts[fields[0]] = append(r.hosts[fields[0]], a)
		}
	}
	return r
}

func (r *corpusResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.asked = append(r.asked, host)
	r.mu.Unlock()
	if a, ok := r.hosts[host]; ok {
		return slices.Clone(a), nil
	}
	if r.wildcard {
		return []netip.Addr{attackerAddr}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// cancelled is the context every corpus request runs under.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func fetchReq(raw string) ports.FetchRequest {
	return ports.FetchRequest{URL: raw, MaxBytes: 1 << 20, Timeout: time.Second, MaxRedirects: 3}
}

// leaks returns the parts of p that a refusal must not contain: the payload
// itself and every spelling of its host we can derive.
func leaks(p string) []string {
	out := []string{p}
	if i := strings.Index(p, "://"); i >= 0 {
		auth := p[i+3:]
		if j := strings.IndexAny(auth, "/?#\\"); j >= 0 {
			auth = auth[:j]
		}
		out = append(out, auth)
	}
	if u, err := url.Parse(p); err == nil {
		out = append(out, u.Host, u.Hostname())
		if a, err := httpx.ToASCII(u.Hostname()); err == nil {
			out = append(out, a)
		}
	}
	var nonEmpty []string
	for _, s := range out {
		if strings.TrimSpace(s) != "" {
			nonEmpty = append(nonEmpty, s)
		}
	}
	return nonEmpty
}

func checkNoLeak(t *testing.T, text, p string) {
	t.Helper()
	for _, l := range leaks(p) {
		if strings.Contains(text, l) {
			t.Errorf("refusal %q contains %q", text, l)
		}
	}
}

// policyDecision composes the pure policy the way the adapter does for an
// ordinary (not internal, no allowlist) request.
func policyDecision(p string, res ports.Resolver) security.Decision {
	u, d := security.ParseURL(p)
	if !d.Allowed {
		return d
	}
	tgt, d := security.CheckURL(u, httpx.ToASCII)
	if !d.Allowed {
		return d
	}
	if d := security.CheckPort(tgt.Port, nil); !d.Allowed {
		return d
	}
	if d := security.CheckHostName(tgt.Host); !d.Allowed {
		return d
	}
	if tgt.Addr.IsValid() {
		return security.CheckAddr(tgt.Addr)
	}
	addrs, err := res.LookupNetIP(context.Background(), "ip", tgt.Host)
	if err != nil {
		return security.Decision{Reason: ports.EgressResolve}
	}
	return security.CheckAnswers(addrs)
}

func TestSSRFCorpusAgainstThePolicy(t *testing.T) {
	res := loadResolver(t, false)
	for _, p := range append(loadPayloads(t, "ssrf_payloads.txt"), generatedPayloads()...) {
		t.Run(p.name(), func(t *testing.T) {
			d := policyDecision(p.text, res)
			if d.Allowed || !slices.Contains(policyReasons, d.Reason) {
				t.Fatalf("payload not refused by policy: %+v", d)
			}
			checkNoLeak(t, string(d.Reason), p.text)
			checkNoLeak(t, d.Err().Error(), p.text)
		})
	}
}

func TestSSRFCorpusAgainstTheEgressAdapter(t *testing.T) {
	res := loadResolver(t, false)
	e, err := httpx.New(httpx.Config{}, res)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(loadPayloads(t, "ssrf_payloads.txt"), generatedPayloads()...) {
		t.Run(p.name(), func(t *testing.T) {
			_, err := e.Fetch(cancelled(), fetchReq(p.text))
			reason := ports.EgressReasonOf(err)
			if !slices.Contains(policyReasons, reason) {
				t.Fatalf("payload got past the guard: reason %q, error %v", reason, err)
			}
			checkNoLeak(t, err.Error(), p.text)
		})
	}
	res.mu.Lock()
	defer res.mu.Unlock()
	for _, name := range res.asked {
		if _, ok := res.hosts[name]; !ok {
			t.Errorf("a payload's name is missing from resolver_hosts.txt: %q", name)
		}
	}
}

// TestSSRFCorpusThroughSafeFetch runs the corpus through the tool itself,
// by way of the guard chain (schema validation, then the handler), over the
// real adapter: every payload is a validation refusal whose message echoes
// nothing.
func TestSSRFCorpusThroughSafeFetch(t *testing.T) {
	e, err := httpx.New(httpx.Config{}, loadResolver(t, false))
	if err != nil {
		t.Fatal(err)
	}
	s := settings.Defaults()
	s.RateLimitEnabled = false
	app, err := core.New(coretest.Deps(s, portstest.AllowAll{}, coretools.Family.With(coretools.Ports{Egress: e, Sandbox: &portstest.FileJail{}})))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(loadPayloads(t, "ssrf_payloads.txt"), generatedPayloads()...) {
		t.Run(p.name(), func(t *testing.T) {
			_, err := app.Call(cancelled(), ports.Operator(), "safe_fetch", map[string]any{"url": p.text})
			te, ok := catalog.AsToolError(err)
			if !ok || te.Kind != catalog.KindValidation {
				t.Fatalf("payload not refused as invalid: %v", err)
			}
			checkNoLeak(t, te.Message, p.text)
		})
	}
}

func TestAllowlistCorpusAgainstTheEgressAdapter(t *testing.T) {
	res := loadResolver(t, true)
	e, err := httpx.New(httpx.Config{AllowedHosts: []string{corpusAllowedHost}}, res)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range loadPayloads(t, "allowlist_payloads.txt") {
		t.Run(p.name(), func(t *testing.T) {
			_, err := e.Fetch(cancelled(), fetchReq(p.text))
			reason := ports.EgressReasonOf(err)
			if !slices.Contains(policyReasons, reason) {
				t.Fatalf("payload got past the allowlist: reason %q, error %v", reason, err)
			}
			checkNoLeak(t, err.Error(), p.text)
		})
	}
}

// TestHarnessDetectsAdmission proves the corpus tests can fail: URLs the
// guard must admit come back with a transport failure (the context is
// cancelled), not a policy refusal, and both corpus harnesses see that.
func TestHarnessDetectsAdmission(t *testing.T) {
	open, err := httpx.New(httpx.Config{}, loadResolver(t, false))
	if err != nil {
		t.Fatal(err)
	}
	allow, err := httpx.New(httpx.Config{AllowedHosts: []string{corpusAllowedHost}}, loadResolver(t, true))
	if err != nil {
		t.Fatal(err)
	}
	res := loadResolver(t, false)
	controls := []struct {
		e   *httpx.Egress
		raw string
	}{
		{open, "http://example-public.test/"},
		{open, "https://example-public.test:443/path?q=1"},
		{open, "http://8.8.8.8/"},
		{open, "http://[2606:4700:4700::1111]/"},
		{open, "http://[::ffff:8.8.8.8]/"},
		{open, "http://[64:ff9b::808:808]/"},
		{open, "http://[2002:808:808::1]/"},
		{open, "http://nat64-public.test/"},
		{open, "http://teredo-public.test/"},
		{open, "http://ｅｘａｍｐｌｅ－ｐｕｂｌｉｃ.test/"},
		{allow, "http://api.example.com/"},
		{allow, "https://API.Example.COM./x"},
		{allow, "http://ａｐｉ.example.com/"},
		{allow, "http://api。example。com/"},
	}
	for _, c := range controls {
		t.Run(c.raw, func(t *testing.T) {
			_, err := c.e.Fetch(cancelled(), fetchReq(c.raw))
			if reason := ports.EgressReasonOf(err); slices.Contains(policyReasons, reason) || reason == "" {
				t.Fatalf("control refused by policy or not attempted: %q (%v)", reason, err)
			}
			if c.e == open {
				if d := policyDecision(c.raw, res); !d.Allowed {
					t.Fatalf("policy refused a public control: %+v", d)
				}
			}
		})
	}
}
