package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/arrowhead-go/arrowhead/adapters/auth"
	"github.com/arrowhead-go/arrowhead/adapters/config"
	mcpadapter "github.com/arrowhead-go/arrowhead/adapters/mcp"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/cmd/arrowhead/internal/prefault"
	"github.com/arrowhead-go/arrowhead/cmd/arrowhead/internal/startgc"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// HTTP server limits.
const (
	readHeaderTimeout = 10 * time.Second
	// readTimeout bounds a whole request read; /mcp bodies have their own,
	// shorter deadline (mcpadapter.DefaultBodyReadTimeout).
	readTimeout    = 60 * time.Second
	writeTimeout   = 5 * time.Minute
	idleTimeout    = 2 * time.Minute
	maxHeaderBytes = 64 << 10
	// drainTimeout bounds how long SIGTERM waits for in-flight calls.
	drainTimeout = 30 * time.Second
	// settleDelay is when start-up ends (settleStartup): after the client's
	// opening exchange (initialize, tools/list), never on its path.
	settleDelay = time.Second
)

func serveCmd(stdin io.Reader, stdout, stderr io.Writer) int {
	s, reason := loadSettingsReason(stderr)
	if s == nil {
		if os.Getenv("ARROWHEAD_TRANSPORT") != "http" {
			answerRefusal(stdin, stdout, "arrowhead: invalid configuration: "+reason)
		}
		return exitUsage
	}
	for _, w := range config.UnknownWarnings(config.Options{}) {
		fmt.Fprintf(stderr, "arrowhead: warning: %s\n", w)
	}
	ctx, stop := signalContext()
	defer stop()

	// Over stdio, stdout is the protocol: the audit log goes to stderr.
	auditW := io.Writer(stderr)
	if s.IsHTTP() {
		auditW = stdout
	}
	rt, err := wire.Build(ctx, s, wire.Options{AuditWriter: auditW, LogWriter: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead: %v\n", err)
		if !s.IsHTTP() {
			answerRefusal(stdin, stdout, "arrowhead: "+oneLine(err.Error()))
		}
		return exitFailure
	}
	defer func() {
		// Closing writes the audit chain's final checkpoint. A stdio
		// client may already have closed our stderr (mcp-go's does,
		// before waiting for the exit): that write must fail with EPIPE,
		// not kill the process with SIGPIPE before the other closers run.
		signal.Ignore(syscall.SIGPIPE)
		closeCtx, cancel := context.WithTimeout(context.Background(), drainTimeout)
		defer cancel()
		_ = rt.Close(closeCtx)
	}()

	if s.IsHTTP() {
		err = serveHTTP(ctx, rt)
	} else {
		err = serveStdio(ctx, rt, stdin, stdout)
	}
	if err != nil {
		rt.Logger.Error("server stopped", zap.String("reason", err.Error()))
		return exitFailure
	}
	return exitOK
}

// telemetryOn reports whether spans or metrics leave the process (OTLP
// export or the Prometheus endpoint), so the adapter collects what they
// record about each request.
func telemetryOn(s *settings.Settings) bool {
	return s.OTelExporterOTLPEndpoint != "" || s.MetricsAddr != ""
}

func serveStdio(ctx context.Context, rt *wire.Runtime, stdin io.Reader, stdout io.Writer) error {
	srv := mcpadapter.New(rt.App, mcpadapter.Options{
		Name:            wire.ServerName,
		Version:         wire.Version,
		Principal:       func(context.Context) ports.Principal { return ports.Operator() },
		ToolListTTL:     time.Duration(rt.Settings.ToolListTTLMS) * time.Millisecond,
		ResourceReadTTL: time.Duration(rt.Settings.ResourceReadTTLMS) * time.Millisecond,
		Telemetry:       telemetryOn(rt.Settings),
	})
	rt.Logger.Info("serving", zap.String("transport", "stdio"), zap.String("profile", rt.Settings.Profile))
	settle := time.AfterFunc(settleDelay, settleStartup)
	defer settle.Stop()
	return srv.ServeStdio(ctx, stdin, stdout, func(event string) { rt.Logger.Warn(event) })
}

func serveHTTP(ctx context.Context, rt *wire.Runtime) error {
	s := rt.Settings
	principal := func(context.Context) ports.Principal { return ports.Operator() }
	if s.AuthEnabled {
		principal = func(ctx context.Context) ports.Principal {
			p, _ := auth.PrincipalFromContext(ctx)
			return p
		}
	}
	srv := mcpadapter.New(rt.App, mcpadapter.Options{
		Name:            wire.ServerName,
		Version:         wire.Version,
		Principal:       principal,
		ToolListTTL:     time.Duration(s.ToolListTTLMS) * time.Millisecond,
		ResourceReadTTL: time.Duration(s.ResourceReadTTLMS) * time.Millisecond,
		Telemetry:       telemetryOn(s),
	})
	refused := httpRefusal(rt)
	opts := mcpadapter.HTTPOptions{
		Stateless:      s.StatelessHTTP,
		AllowedHosts:   s.AllowedHosts,
		AllowedOrigins: s.AllowedOrigins,
		Health:         rt.Health,
		Refused:        refused,
		Report:         func(event string) { rt.Logger.Warn(event) },
	}
	if s.AuthEnabled {
		opts.Auth = auth.Middleware(rt.Verifier, auth.MetadataURL(s.CanonicalResource()), func(r *http.Request, reason string) {
			refused(r, "unauthenticated:"+reason)
		}, auth.WithDPoP(rt.DPoP))
		opts.Metadata = auth.ProtectedResourceHandler(s.Audience(), []string{s.Issuer()}, auth.WithDPoP(rt.DPoP))
		opts.Admin = mcpadapter.AdminHandler(rt.App, func(r *http.Request) ports.Principal {
			p, _ := auth.PrincipalFromContext(r.Context())
			return p
		}, refused)
	} else {
		rt.Logger.Warn("serving HTTP with authentication off (ARROWHEAD_ALLOW_INSECURE_HTTP=true): every caller is the local operator")
	}
	handler, closeSessions := srv.HTTPHandler(opts)

	ln, err := net.Listen("tcp", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)))
	if err != nil {
		return fmt.Errorf("ARROWHEAD_PORT: cannot listen: %w", err)
	}
	hs := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
	rt.Logger.Info("serving", zap.String("transport", "http"), zap.String("addr", ln.Addr().String()),
		zap.Bool("auth", s.AuthEnabled), zap.String("profile", s.Profile))

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	settle := time.AfterFunc(settleDelay, settleStartup)
	defer settle.Stop()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	// SIGTERM: stop accepting, let in-flight calls finish, then exit.
	rt.Logger.Info("draining")
	drainCtx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	closeSessions(drainCtx)
	if err := hs.Shutdown(drainCtx); err != nil {
		return fmt.Errorf("draining: %w", err)
	}
	rt.Logger.Info("drained")
	return nil
}

// settleStartup ends start-up once the server has answered its first
// requests: the prefaulting helper stops, collection resumes at the
// default pacing, and the garbage and the executable's pages that only
// start-up touched go back to the OS.
// Both used to happen before serving, where they cost the first answer a
// full collection and the re-faulting of every code page it needed (about
// a fifth of stdio start-up).
func settleStartup() {
	prefault.Stop()
	startgc.Resume()
	releaseStartupPages()
}

// httpRefusal writes the audit line for a request refused before any
// component was reached.
func httpRefusal(rt *wire.Runtime) func(r *http.Request, reason string) {
	kinds := map[string]string{
		"host_not_allowed":   "authorization",
		"origin_not_allowed": "authorization",
		"body_too_large":     "validation",
		"body_timeout":       "validation",
		"body_busy":          "unavailable",
		"insufficient_scope": "authorization",
	}
	return func(r *http.Request, reason string) {
		kind, ok := kinds[reason]
		if !ok {
			kind = "unauthenticated"
		}
		rt.Audit.Record(r.Context(), ports.AuditRecord{
			Time:      time.Now(),
			Subject:   "anonymous",
			Kind:      ports.ComponentHTTP,
			Name:      "mcp",
			ArgShapes: map[string]string{"reason": reason},
			Status:    ports.StatusRefused,
			Refusal:   kind,
		})
	}
}
