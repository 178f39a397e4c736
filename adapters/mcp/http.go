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
	// Auth wraps /mcp with bearer-token verification; nil serves without it
	// (only reachable with ARROWHEAD_ALLOW_INSECURE_HTTP=true).
	Auth func(http.Handler) http.Handler
	// Metadata serves MetadataPath; nil when auth is off.
	Metadata http.Handler
	// Health reports each configured dependency on /ready.
	Health []ports.HealthReporter
	// Refused is told about requests refused before the guard chain (host,
	// origin, body size), with a fixed reason, for the audit log.
	Refused func(r *http.Request, reason string)
	// Report receives transport events as fixed text.
	Report func(event string)
}

// HTTPHandler returns the whole HTTP surface: /mcp, /health, /ready and,
// with auth on, the protected-resource metadata.
func (s *Server) HTTPHandler(o HTTPOptions) (http.Handler, func(context.Context)) {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
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
		// Our own Host allowlist replaces mcp-go's loopback check when set,
		// so a reverse proxy on the same machine can forward public hosts.
		server.WithDisableLocalhostProtection(len(o.AllowedHosts) > 0),
	}
	if o.Stateless {
		opts = append(opts, server.WithStateLess(true), server.WithDisableStreaming(true))
	} else {
		opts = append(opts, server.WithStateful(true))
	}
	streamable := server.NewStreamableHTTPServer(s.mcp, opts...)

	var endpoint http.Handler = streamable
	if o.Auth != nil {
		endpoint = o.Auth(endpoint)
	}
	endpoint = s.bounded(endpoint, o)
	endpoint = rebindingGuard(endpoint, o)

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
	shutdown := func(ctx context.Context) { streamable.CloseSessions(ctx) }
	return mux, shutdown
}

// bounded caps the body, then reroutes unknown component names before
// mcp-go sees the message.
func (s *Server) bounded(next http.Handler, o HTTPOptions) http.Handler {
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
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, o.MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				o.Refused(r, "body_too_large")
				writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "request body too large"})
				return
			}
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "request body could not be read"})
			return
		}
		body = s.reroute(body, r.Header)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// rebindingGuard refuses a Host or Origin outside the allowlists.
func rebindingGuard(next http.Handler, o HTTPOptions) http.Handler {
	hosts := lowerAll(o.AllowedHosts)
	origins := lowerAll(o.AllowedOrigins)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(hosts) > 0 && !hostAllowed(hosts, r.Host) {
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

// ready reports every configured dependency; degraded still serves (200),
// down does not (503).
func ready(w http.ResponseWriter, r *http.Request, deps []ports.HealthReporter) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	checks := map[string]string{}
	overall := ports.HealthOK
	for _, d := range deps {
		st := d.Health(ctx)
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
	writeJSON(w, code, map[string]any{"status": string(overall), "checks": checks})
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
