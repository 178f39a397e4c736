package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/arrowhead-go/arrowhead/ports"
)

// HTTP routes.
const (
	EndpointPath = "/mcp"
	HealthPath   = "/health"
	ReadyPath    = "/ready"
	// MetadataPath is the RFC 9728 protected-resource metadata for /mcp.
	MetadataPath = "/.well-known/oauth-protected-resource/mcp"
	// DefaultMaxBodyBytes caps a request body on /mcp.
	DefaultMaxBodyBytes = 8 << 20
	// DefaultBodyReadTimeout bounds reading one request body, from the
	// moment the request was admitted to its last byte.
	DefaultBodyReadTimeout = 10 * time.Second
	// DefaultMaxConcurrentBodies bounds the bodies being read at once, so
	// buffered request bodies never exceed this many times MaxBodyBytes
	// (128 MiB at the defaults) however many connections are open. A
	// request beyond it waits for a slot.
	DefaultMaxConcurrentBodies = 16
	// DefaultBodySlotWait is how long a request waits for a body slot
	// before it is told to retry (503).
	DefaultBodySlotWait = 2 * time.Second
	// busyRetryAfter is the Retry-After sent when no body slot freed up.
	busyRetryAfter = "1"
	// readyTimeout bounds the dependency checks behind /ready.
	readyTimeout = 2 * time.Second
)

// HTTPOptions configure the streamable HTTP front.
type HTTPOptions struct {
	// Stateless serves without protocol sessions (any replica serves any
	// request); the 2026-07-28 leg is sessionless either way.
	Stateless bool
	// AllowedHosts and AllowedOrigins refuse requests whose Host or Origin
	// is not listed (DNS-rebinding defence). Empty lists leave the check to
	// mcp-go's loopback protection.
	AllowedHosts   []string
	AllowedOrigins []string
	// MaxBodyBytes caps a request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyReadTimeout bounds reading a body; 0 means
	// DefaultBodyReadTimeout.
	BodyReadTimeout time.Duration
	// MaxConcurrentBodies bounds the bodies read at once; 0 means
	// DefaultMaxConcurrentBodies.
	MaxConcurrentBodies int
	// BodySlotWait bounds the wait for a body slot; 0 means
	// DefaultBodySlotWait.
	BodySlotWait time.Duration
	// Auth wraps /mcp with bearer-token verification; nil serves without it
	// (only reachable with ARROWHEAD_ALLOW_INSECURE_HTTP=true).
	Auth func(http.Handler) http.Handler
	// Metadata serves MetadataPath; nil when auth is off.
	Metadata http.Handler
	// Health reports each configured dependency on /ready.
	Health []ports.HealthReporter
	// Refused is told about requests refused before the guard chain (host,
	// origin, body size, body deadline, no body slot), with a fixed reason,
	// for the audit log.
	Refused func(r *http.Request, reason string)
	// Report receives transport events as fixed text.
	Report func(event string)
	// Admin serves AdminKillPath behind Auth (AdminHandler); nil (and
	// always with auth off) leaves it unserved.
	Admin http.Handler
}

// HTTPHandler returns the whole HTTP surface: /mcp, /health, /ready and,
// with auth on, the protected-resource metadata.
//
// A request to /mcp is decided from its headers before any of its body is
// read: Host and Origin first, then the bearer token. A refused request is
// answered at once and its connection closed, so an unauthenticated upload,
// stalled or endless, costs neither memory nor a wait. Only an admitted
// request's body is read, under its own deadline and within a bound on the
// bodies read at once.
func (s *Server) HTTPHandler(o HTTPOptions) (http.Handler, func(context.Context)) {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.BodyReadTimeout <= 0 {
		o.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if o.MaxConcurrentBodies <= 0 {
		o.MaxConcurrentBodies = DefaultMaxConcurrentBodies
	}
	if o.BodySlotWait <= 0 {
		o.BodySlotWait = DefaultBodySlotWait
	}
	if o.Refused == nil {
		o.Refused = func(*http.Request, string) {}
	}
	if o.Report == nil {
		o.Report = func(string) {}
	}
	opts := []server.StreamableHTTPOption{
		server.WithEndpointPath(EndpointPath),
		server.WithStreamableHTTPLogger(slog.New(eventHandler{report: o.Report})),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return withHeaders(ctx, r.Header)
		}),
		// rebindingGuard makes mcp-go's loopback check (which runs only
		// after the token check and quotes the Host back) before any other.
		server.WithDisableLocalhostProtection(true),
	}
	if o.Stateless {
		opts = append(opts, server.WithStateLess(true), server.WithDisableStreaming(true))
	} else {
		opts = append(opts, server.WithStateful(true))
	}
	streamable := server.NewStreamableHTTPServer(s.mcp, opts...)

	var endpoint http.Handler = s.bounded(streamable, o)
	if o.Auth != nil {
		endpoint = o.Auth(endpoint)
	}
	endpoint = rebindingGuard(endpoint, o)
	endpoint = closeUnlessBodyRead(endpoint)

	mux := http.NewServeMux()
	mux.Handle(EndpointPath, endpoint)
	mux.HandleFunc("GET "+HealthPath, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	})
	mux.HandleFunc("GET "+ReadyPath, func(w http.ResponseWriter, r *http.Request) {
		ready(w, r, o.Health)
	})
	if o.Metadata != nil {
		mux.Handle(MetadataPath, o.Metadata)
	}
	mux.Handle("GET "+AttestationKeyPath, s.attestationKeyHandler())
	if o.Admin != nil && o.Auth != nil {
		admin := closeUnlessBodyRead(rebindingGuard(o.Auth(o.Admin), o))
		mux.Handle(AdminKillPath, admin)
		mux.Handle(AdminKillPath+"/", admin)
	}
	shutdown := func(ctx context.Context) { streamable.CloseSessions(ctx) }
	return mux, shutdown
}

// closeUnlessBodyRead marks a response to a request with a body as the
// connection's last until bounded has read that body. net/http otherwise
// drains up to 256 KiB of an unread body before it sends the response, so
// a refusal of a stalled or endless upload would wait on the uploader;
// closing instead answers at once and never reads the body.
func closeUnlessBodyRead(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// bounded reads an admitted request's body: at most MaxConcurrentBodies at
// once (a request waits BodySlotWait for a slot), each under
// BodyReadTimeout and capped at MaxBodyBytes.
func (s *Server) bounded(next http.Handler, o HTTPOptions) http.Handler {
	slots := make(chan struct{}, o.MaxConcurrentBodies)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > o.MaxBodyBytes {
			o.Refused(r, "body_too_large")
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "request body too large"})
			return
		}
		deadline := time.Now().Add(o.BodyReadTimeout)
		rc := http.NewResponseController(w)
		// Not every ResponseWriter supports deadlines (a test recorder);
		// the server's own ReadTimeout still bounds the read there.
		_ = rc.SetReadDeadline(deadline)
		select {
		case slots <- struct{}{}:
			// A free slot, the common case: no timer to make.
		default:
			wait := time.NewTimer(min(o.BodySlotWait, o.BodyReadTimeout))
			select {
			case slots <- struct{}{}:
				wait.Stop()
			case <-wait.C:
				o.Refused(r, "body_busy")
				w.Header().Set("Retry-After", busyRetryAfter)
				writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "server busy, retry shortly"})
				return
			case <-r.Context().Done():
				wait.Stop()
				return
			}
		}
		body, err := readBody(w, r, o.MaxBodyBytes)
		<-slots
		if err != nil {
			var mbe *http.MaxBytesError
			var ne net.Error
			switch {
			case errors.As(err, &mbe):
				o.Refused(r, "body_too_large")
				writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "request body too large"})
			case errors.As(err, &ne) && ne.Timeout():
				o.Refused(r, "body_timeout")
				writeJSON(w, http.StatusRequestTimeout, map[string]any{"error": "request body not received in time"})
			default:
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "request body could not be read"})
			}
			return
		}
		// The body is in: the connection may be reused, and the deadline
		// that bounded the upload must not cut off a long call (an
		// expired read deadline cancels the request's context).
		w.Header().Del("Connection")
		_ = rc.SetReadDeadline(time.Time{})
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// readBody reads r's body, at most limit bytes, into a buffer of the
// announced length when there is one (already checked against limit),
// rather than one grown as it fills.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if r.ContentLength <= 0 {
		return io.ReadAll(body)
	}
	// net/http ends the body at the announced length; a body cut short is
	// an error, as it is for io.ReadAll.
	buf := make([]byte, r.ContentLength)
	_, err := io.ReadFull(body, buf)
	return buf, err
}

// rebindingGuard refuses a Host or Origin outside the allowlists. Without
// a Host allowlist, a request that reached a loopback address must name a
// loopback host (what mcp-go's own check does, made here before the token
// and the body are looked at, and without quoting the Host back).
func rebindingGuard(next http.Handler, o HTTPOptions) http.Handler {
	hosts := lowerAll(o.AllowedHosts)
	origins := lowerAll(o.AllowedOrigins)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(hosts) > 0 && !hostAllowed(hosts, r.Host) || len(hosts) == 0 && rebound(r) {
			o.Refused(r, "host_not_allowed")
			writeJSON(w, http.StatusForbidden, map[string]any{"error": "host not allowed"})
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && len(origins) > 0 &&
			!slices.Contains(origins, strings.TrimRight(strings.ToLower(origin), "/")) {
			o.Refused(r, "origin_not_allowed")
			writeJSON(w, http.StatusForbidden, map[string]any{"error": "origin not allowed"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// rebound reports a request that arrived on a loopback address but names a
// host that is not loopback: a browser driven by a page whose name was
// rebound to 127.0.0.1.
func rebound(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	return isLoopback(local.String()) && !isLoopback(r.Host)
}

// isLoopback reports whether a host or host:port names a loopback
// interface.
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func hostAllowed(allowed []string, host string) bool {
	host = strings.ToLower(host)
	if slices.Contains(allowed, host) {
		return true
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		return slices.Contains(allowed, h)
	}
	return false
}

func lowerAll(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		out = append(out, strings.TrimRight(strings.ToLower(strings.TrimSpace(s)), "/"))
	}
	return out
}

// ready reports every configured dependency, with the reason of each that
// gives one (ports.HealthExplainer); degraded still serves (200), down
// does not (503).
func ready(w http.ResponseWriter, r *http.Request, deps []ports.HealthReporter) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	checks, reasons := map[string]string{}, map[string]string{}
	overall := ports.HealthOK
	for _, d := range deps {
		var st ports.HealthState
		if e, ok := d.(ports.HealthExplainer); ok {
			var why string
			if st, why = e.HealthReason(ctx); why != "" {
				reasons[d.Name()] = why
			}
		} else {
			st = d.Health(ctx)
		}
		checks[d.Name()] = string(st)
		switch {
		case st == ports.HealthDown:
			overall = ports.HealthDown
		case st == ports.HealthDegraded && overall == ports.HealthOK:
			overall = ports.HealthDegraded
		}
	}
	code := http.StatusOK
	if overall == ports.HealthDown {
		code = http.StatusServiceUnavailable
	}
	body := map[string]any{"status": string(overall), "checks": checks}
	if len(reasons) > 0 {
		body["reasons"] = reasons
	}
	writeJSON(w, code, body)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// eventHandler forwards mcp-go's transport log messages (fixed strings in
// its code) without their attributes, which may carry request data.
type eventHandler struct{ report func(string) }

func (h eventHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h eventHandler) Handle(_ context.Context, r slog.Record) error {
	h.report("mcp transport: " + r.Message)
	return nil
}
func (h eventHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h eventHandler) WithGroup(string) slog.Handler      { return h }
