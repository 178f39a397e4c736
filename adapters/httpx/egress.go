// Package httpx is the outbound HTTP adapter: the SSRF-pinning egress
// transport behind ports.Egress, on which the fetch, embedding, model and
// webhook clients are built.
package httpx

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/idna"

	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Defaults and bounds of the egress path.
const (
	// DefaultUserAgent is sent when Config.UserAgent is empty.
	DefaultUserAgent = "arrowhead-go-egress/1"
	// DefaultTimeout bounds an exchange whose request names no timeout.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxBytes caps a body whose request names no cap.
	DefaultMaxBytes int64 = 1_000_000
	// MaxRedirectsCeiling is the most redirects any request may follow,
	// whatever it asks for.
	MaxRedirectsCeiling = 20
	// MaxResponseHeaderBytes bounds the response header block.
	MaxResponseHeaderBytes = 64 << 10
	// MaxDialAddresses is how many approved addresses of one answer are
	// tried, in order, before the hop fails.
	MaxDialAddresses = 8
)

// Config configures the egress adapter. All of it comes from operator
// configuration, never from a caller.
type Config struct {
	// AllowedHosts, when non-empty, is the only set of hosts reachable
	// (exact, case-insensitive match on every hop). Empty admits any host
	// whose addresses are public.
	AllowedHosts []string
	// AllowedPorts are ports reachable besides 80 and 443.
	AllowedPorts []int
	// InternalHosts are exact host:port pairs a request marked Internal may
	// reach although they are not public (a local model server).
	InternalHosts []string
	// UserAgent is sent on every request; DefaultUserAgent when empty.
	UserAgent string
}

// Egress is the SSRF-guarded ports.Egress. For every hop it parses and
// checks the URL, resolves the host once, checks every address, and dials
// only an approved address, re-checking it in the dialer's Control hook;
// the original host travels in the Host header and as the TLS server name.
// Redirects are followed by hand and each hop is guarded afresh. It keeps no
// connection, cookie or credential between requests and is safe for
// concurrent use.
type Egress struct {
	allowedHosts map[string]struct{}
	extraPorts   []int
	internal     map[string]struct{}
	userAgent    string
	resolver     ports.Resolver

	// addrPolicy decides every resolved and every connected address. It is
	// security.CheckAddr; nothing in this package changes it, and only the
	// package's tests (export_test.go) replace it, to admit exactly an
	// httptest server's loopback address.
	addrPolicy security.AddrPolicy
	// rootCAs verifies servers; nil is the system pool. Only tests set it.
	rootCAs *x509.CertPool
	// dialObserver, when set, sees every address the Control hook is asked
	// to approve. Only tests set it.
	dialObserver func(netip.AddrPort)
}

var _ ports.Egress = (*Egress)(nil)

// ToASCII maps a host name to ASCII exactly as Go's HTTP client does before
// dialling: ASCII passes through, anything else goes through the IDNA
// lookup profile, which turns full-width digits and ideographic full stops
// into their ASCII forms.
func ToASCII(host string) (string, error) {
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			return idna.Lookup.ToASCII(host)
		}
	}
	return host, nil
}

// New builds the egress adapter. resolver is net.DefaultResolver in
// production. Configuration that cannot be honoured exactly is an error.
func New(cfg Config, resolver ports.Resolver) (*Egress, error) {
	if resolver == nil {
		return nil, errors.New("httpx: a resolver is required")
	}
	e := &Egress{
		allowedHosts: map[string]struct{}{},
		internal:     map[string]struct{}{},
		userAgent:    cfg.UserAgent,
		resolver:     resolver,
		addrPolicy:   security.CheckAddr,
	}
	if e.userAgent == "" {
		e.userAgent = DefaultUserAgent
	}
	if !httpguts.ValidHeaderFieldValue(e.userAgent) {
		return nil, errors.New("httpx: the user agent is not a valid header value")
	}
	for i, h := range cfg.AllowedHosts {
		host, _, d := security.NormalizeHost(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ToASCII)
		if !d.Allowed {
			return nil, fmt.Errorf("httpx: allowed host %d is not a host name (%s)", i+1, d.Rule)
		}
		e.allowedHosts[host] = struct{}{}
	}
	for i, p := range cfg.AllowedPorts {
		if p < security.MinPort || p > security.MaxPort {
			return nil, fmt.Errorf("httpx: allowed port %d is out of range", i+1)
		}
		e.extraPorts = append(e.extraPorts, p)
	}
	for i, hp := range cfg.InternalHosts {
		key, err := internalKey(hp)
		if err != nil {
			return nil, fmt.Errorf("httpx: internal host %d: %w", i+1, err)
		}
		e.internal[key] = struct{}{}
	}
	return e, nil
}

func internalKey(hp string) (string, error) {
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", errors.New("must be host:port")
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < security.MinPort || port > security.MaxPort || strconv.Itoa(port) != p {
		return "", errors.New("must carry a port between 1 and 65535")
	}
	host, _, d := security.NormalizeHost(h, ToASCII)
	if !d.Allowed {
		return "", fmt.Errorf("is not a host name (%s)", d.Rule)
	}
	return security.JoinHostPort(host, port), nil
}

// Operator-facing causes inside EgressErrors.
var (
	errInvalidRequest   = errors.New("invalid egress request")
	errNotAllowlisted   = errors.New("host is not on the egress allowlist")
	errPinViolation     = errors.New("connected address is not the approved one")
	errUnexpectedDial   = errors.New("transport asked to dial an unexpected address")
	errRedirectInternal = errors.New("redirect from an internal endpoint")
	errRedirectLimit    = errors.New("redirect limit reached")
	errContentLength    = errors.New("declared content length exceeds the cap")
	errWireCap          = errors.New("encoded body exceeds the cap")
	errBodyCap          = errors.New("decoded body exceeds the cap")
	errContentEncoding  = errors.New("unsupported content encoding")
)

func fail(reason ports.EgressReason, cause error) error {
	return &ports.EgressError{Reason: reason, Err: cause}
}

// Methods the egress path sends. Callers need reads and posts only.
var allowedMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost}

// managedHeaders are set by the adapter (or by net/http for framing) and
// may not come from a request: they route, frame or carry state.
var managedHeaders = []string{
	"Host", "User-Agent", "Accept-Encoding", "Content-Length", "Transfer-Encoding",
	"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization", "Proxy-Authenticate",
	"Te", "Trailer", "Upgrade", "Cookie",
}

// crossOriginHeaders are the request headers that still travel after a
// redirect to another scheme, host or port; everything else a request set
// (an API key, say) is meant for the origin it named.
var crossOriginHeaders = []string{"Accept", "Accept-Language"}

// hop is one guarded request: where it goes and the addresses it may use.
type hop struct {
	target security.Target
	// pinned are the approved addresses, unmapped, with the target port.
	pinned []netip.AddrPort
	// exempt marks an exact internal pair: reachability rules skipped.
	exempt bool
}

// Fetch performs req through the guard. Every refusal and failure is a
// *ports.EgressError whose reason is safe to show a caller.
func (e *Egress) Fetch(ctx context.Context, req ports.FetchRequest) (ports.FetchResponse, error) {
	method, header, err := e.prepare(req)
	if err != nil {
		return ports.FetchResponse{}, err
	}
	maxBytes, timeout, maxRedirects, err := limits(req)
	if err != nil {
		return ports.FetchResponse{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	u, d := security.ParseURL(req.URL)
	if !d.Allowed {
		return ports.FetchResponse{}, d.Err()
	}
	body := req.Body
	var prev *security.Target
	for redirects := 0; ; redirects++ {
		h, err := e.guard(ctx, u, req.Internal)
		if err != nil {
			return ports.FetchResponse{}, err
		}
		if prev != nil && !sameOrigin(*prev, h.target) {
			header = onlyHeaders(header, crossOriginHeaders)
		}
		resp, err := e.exchange(ctx, h, method, body, header)
		if err != nil {
			return ports.FetchResponse{}, classify(ctx, err)
		}
		loc, isRedirect := redirectLocation(resp)
		if !isRedirect {
			return readResponse(ctx, h, resp, maxBytes, req.TruncateBody)
		}
		_ = resp.Body.Close() // a redirect's body is never read
		switch {
		case req.Internal:
			return ports.FetchResponse{}, fail(ports.EgressRedirectRefused, errRedirectInternal)
		case maxRedirects == 0:
			return ports.FetchResponse{}, fail(ports.EgressRedirectRefused, errRedirectLimit)
		case redirects >= maxRedirects:
			return ports.FetchResponse{}, fail(ports.EgressTooManyRedirect, errRedirectLimit)
		}
		next, d := security.ParseRedirect(h.target.URL, loc)
		if !d.Allowed {
			return ports.FetchResponse{}, d.Err()
		}
		method, body = redirectMethod(resp.StatusCode, method, body)
		if body == nil {
			header.Del("Content-Type")
		}
		u = next
		t := h.target
		prev = &t
	}
}

// prepare validates the method and headers and builds the header set that
// is sent: the request's own headers plus the adapter's User-Agent and
// Accept-Encoding, nothing else.
func (e *Egress) prepare(req ports.FetchRequest) (string, http.Header, error) {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if !slices.Contains(allowedMethods, method) {
		return "", nil, fail(ports.EgressBadURL, fmt.Errorf("%w: method not supported", errInvalidRequest))
	}
	h := http.Header{}
	for k, v := range req.Headers {
		if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) {
			return "", nil, fail(ports.EgressBadURL, fmt.Errorf("%w: malformed header", errInvalidRequest))
		}
		ck := http.CanonicalHeaderKey(k)
		if slices.Contains(managedHeaders, ck) {
			return "", nil, fail(ports.EgressBadURL, fmt.Errorf("%w: header %s is managed by the egress adapter", errInvalidRequest, ck))
		}
		h.Set(ck, v)
	}
	h.Set("User-Agent", e.userAgent)
	// The body is decoded here, under the cap, rather than by net/http.
	h.Set("Accept-Encoding", "gzip")
	return method, h, nil
}

func limits(req ports.FetchRequest) (int64, time.Duration, int, error) {
	if req.MaxBytes < 0 || req.Timeout < 0 || req.MaxRedirects < 0 {
		return 0, 0, 0, fail(ports.EgressBadURL, fmt.Errorf("%w: negative limit", errInvalidRequest))
	}
	maxBytes, timeout := req.MaxBytes, req.Timeout
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	return maxBytes, timeout, min(req.MaxRedirects, MaxRedirectsCeiling), nil
}

// guard applies every rule to one hop and resolves it: structure, then
// (unless the hop is an exact internal pair) the host allowlist, the port
// allowlist and the name rules, then one resolution whose every address
// must pass the address policy.
func (e *Egress) guard(ctx context.Context, u *url.URL, internal bool) (*hop, error) {
	t, d := security.CheckURL(u, ToASCII)
	if !d.Allowed {
		return nil, d.Err()
	}
	h := &hop{target: t}
	if internal {
		_, h.exempt = e.internal[t.HostPort()]
	}
	if !h.exempt {
		if len(e.allowedHosts) > 0 {
			if _, ok := e.allowedHosts[t.Host]; !ok {
				return nil, fail(ports.EgressHostNotAllowed, errNotAllowlisted)
			}
		}
		if d := security.CheckPort(t.Port, e.extraPorts); !d.Allowed {
			return nil, d.Err()
		}
		if d := security.CheckHostName(t.Host); !d.Allowed {
			return nil, d.Err()
		}
	}
	addrs, err := e.resolve(ctx, t)
	if err != nil {
		return nil, err
	}
	if !h.exempt {
		if d := e.addrPolicy.Answers(addrs); !d.Allowed {
			return nil, d.Err()
		}
	} else if len(addrs) == 0 {
		return nil, security.Decision{Reason: ports.EgressResolve, Rule: security.RuleEmptyAnswer}.Err()
	}
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a.Unmap(), uint16(t.Port))
		if !slices.Contains(h.pinned, ap) && len(h.pinned) < MaxDialAddresses {
			h.pinned = append(h.pinned, ap)
		}
	}
	return h, nil
}

// resolve returns a literal's own address, or the one answer the resolver
// gives for a name. It is the only lookup of the hop: nothing downstream
// resolves again.
func (e *Egress) resolve(ctx context.Context, t security.Target) ([]netip.Addr, error) {
	if t.Addr.IsValid() {
		return []netip.Addr{t.Addr}, nil
	}
	addrs, err := e.resolver.LookupNetIP(ctx, "ip", t.Host)
	if err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fail(ports.EgressTimeout, err)
		case ctx.Err() != nil:
			return nil, fail(ports.EgressConnect, err)
		}
		return nil, fail(ports.EgressResolve, err)
	}
	return addrs, nil
}

// exchange sends one request over a transport that can reach only the
// hop's approved addresses.
func (e *Egress) exchange(ctx context.Context, h *hop, method string, body []byte, header http.Header) (*http.Response, error) {
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, h.target.URL.String(), rd)
	if err != nil {
		return nil, err
	}
	// Send exactly the URL that was checked, not a re-parse of it.
	hreq.URL = h.target.URL
	hreq.Host = h.target.URL.Host
	hreq.Header = header.Clone()
	client := &http.Client{
		Transport: e.transport(h),
		// Redirects are followed by Fetch, one guarded hop at a time. No
		// Jar: cookies are never stored or sent.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return client.Do(hreq)
}

// transport builds the single-use transport of one hop. Proxy is nil so
// HTTP_PROXY and friends are never honoured; DialContext ignores name
// resolution and dials the pinned addresses; TLS verifies the original host.
func (e *Egress) transport(h *hop) *http.Transport {
	dialer := &net.Dialer{Control: e.control(h)}
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return e.dialPinned(ctx, dialer, h, network, addr)
		},
		TLSClientConfig: &tls.Config{
			ServerName: h.target.Host,
			RootCAs:    e.rootCAs,
			MinVersion: tls.VersionTLS12,
		},
		DisableKeepAlives:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
	}
}

// dialPinned connects to the first approved address that answers. addr is
// what net/http wants to reach; it must be the checked host:port, which
// proves no proxy or rewritten URL slipped in.
func (e *Egress) dialPinned(ctx context.Context, d *net.Dialer, h *hop, network, addr string) (net.Conn, error) {
	if addr != h.target.HostPort() {
		return nil, errUnexpectedDial
	}
	var errs []error
	for _, ap := range h.pinned {
		conn, err := d.DialContext(ctx, network, ap.String())
		if err == nil {
			return conn, nil
		}
		if errors.Is(err, errPinViolation) || ctx.Err() != nil {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// control is the dialer's last word before connect(2): the address being
// connected to must be one the hop approved and must still pass the
// address policy.
func (e *Egress) control(h *hop) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return errPinViolation
		}
		ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		if e.dialObserver != nil {
			e.dialObserver(ap)
		}
		if !slices.Contains(h.pinned, ap) {
			return errPinViolation
		}
		if !h.exempt && !e.addrPolicy(ap.Addr()).Allowed {
			return errPinViolation
		}
		return nil
	}
}

// classify maps a transport error to a reason.
func classify(ctx context.Context, err error) error {
	var (
		opErr   *net.OpError
		certErr *tls.CertificateVerificationError
		recErr  tls.RecordHeaderError
		alert   tls.AlertError
	)
	switch {
	case errors.Is(err, errPinViolation), errors.Is(err, errUnexpectedDial):
		return fail(ports.EgressBlockedAddress, err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fail(ports.EgressTimeout, err)
	case ctx.Err() != nil:
		return fail(ports.EgressConnect, err)
	case errors.As(err, &opErr) && opErr.Op == "dial",
		errors.As(err, &certErr), errors.As(err, &recErr), errors.As(err, &alert):
		return fail(ports.EgressConnect, err)
	}
	return fail(ports.EgressProtocol, err)
}

// redirectLocation reports whether resp is a redirect to follow.
func redirectLocation(resp *http.Response) (string, bool) {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		loc := resp.Header.Get("Location")
		return loc, loc != ""
	}
	return "", false
}

// redirectMethod applies RFC 9110 §15.4: 303 turns anything but HEAD into
// a body-less GET; 301 and 302 do so for POST (as browsers and net/http
// do); 307 and 308 keep method and body.
func redirectMethod(status int, method string, body []byte) (string, []byte) {
	switch {
	case status == http.StatusSeeOther && method != http.MethodHead,
		(status == http.StatusMovedPermanently || status == http.StatusFound) && method == http.MethodPost:
		return http.MethodGet, nil
	}
	return method, body
}

func sameOrigin(a, b security.Target) bool {
	return a.URL.Scheme == b.URL.Scheme && a.Host == b.Host && a.Port == b.Port
}

func onlyHeaders(h http.Header, keep []string) http.Header {
	out := http.Header{}
	for _, k := range keep {
		if v := h.Values(k); len(v) > 0 {
			out[k] = slices.Clone(v)
		}
	}
	for _, k := range []string{"User-Agent", "Accept-Encoding"} {
		out[k] = slices.Clone(h.Values(k))
	}
	return out
}

// readResponse reads the final body under the cap, twice over: the bytes
// on the wire and the bytes after decoding are each held to maxBytes, so
// neither a long stream nor a decompression bomb gets further than the cap.
// With truncate, a body over the cap is cut at it instead of failing.
func readResponse(ctx context.Context, h *hop, resp *http.Response, maxBytes int64, truncate bool) (ports.FetchResponse, error) {
	defer func() { _ = resp.Body.Close() }()
	if resp.ContentLength > maxBytes && !truncate {
		return ports.FetchResponse{}, fail(ports.EgressTooLarge, errContentLength)
	}
	wire := &capReader{r: resp.Body, left: maxBytes}
	var r io.Reader = wire
	switch enc, err := contentEncoding(resp.Header); {
	case err != nil:
		return ports.FetchResponse{}, fail(ports.EgressProtocol, err)
	case enc == "gzip":
		gz, err := gzip.NewReader(wire)
		switch {
		case errors.Is(err, io.EOF):
			r = http.NoBody // an empty body (HEAD, 204) announced as gzip
		case err != nil:
			return ports.FetchResponse{}, readFailure(ctx, err)
		default:
			defer func() { _ = gz.Close() }()
			r = gz
		}
	}
	body, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	over := int64(len(body)) > maxBytes || errors.Is(err, errWireCap)
	if err != nil && !(truncate && errors.Is(err, errWireCap)) {
		return ports.FetchResponse{}, readFailure(ctx, err)
	}
	if over && !truncate {
		return ports.FetchResponse{}, fail(ports.EgressTooLarge, errBodyCap)
	}
	if over {
		body = body[:min(int64(len(body)), maxBytes)]
	}
	return ports.FetchResponse{
		Status:      resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"),
		Body:        body,
		FinalURL:    h.target.URL.String(),
		Truncated:   over,
	}, nil
}

func readFailure(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, errWireCap):
		return fail(ports.EgressTooLarge, err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fail(ports.EgressTimeout, err)
	}
	return fail(ports.EgressProtocol, err)
}

// contentEncoding returns "" for an identity body and "gzip" for a gzip
// one; anything else (we advertise only gzip) is refused.
func contentEncoding(h http.Header) (string, error) {
	var codings []string
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			if c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	switch {
	case len(codings) == 0:
		return "", nil
	case len(codings) == 1 && (codings[0] == "gzip" || codings[0] == "x-gzip"):
		return "gzip", nil
	}
	return "", errContentEncoding
}

// capReader passes through at most left bytes and fails with errWireCap if
// the stream holds more.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var probe [1]byte
		n, err := c.r.Read(probe[:])
		if n > 0 {
			return 0, errWireCap
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
