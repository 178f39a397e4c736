// Package wire composes the application from settings: it opens the
// adapters (jails, egress, rate stores, telemetry, token verifier), builds
// every family's components and returns a ready core.App plus what the
// transports need. The CLI, the tests and Go programs that embed Arrowhead
// all build through here, so they run the same assembly.
package wire

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.uber.org/zap"

	"github.com/arrowhead-go/arrowhead/adapters/auth"
	"github.com/arrowhead-go/arrowhead/adapters/fs"
	"github.com/arrowhead-go/arrowhead/adapters/httpx"
	"github.com/arrowhead-go/arrowhead/adapters/inproc"
	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/adapters/redis"
	"github.com/arrowhead-go/arrowhead/adapters/signing"
	"github.com/arrowhead-go/arrowhead/adapters/sqlguard"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/adapters/telemetry"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/assist"
	"github.com/arrowhead-go/arrowhead/core/tools/contexttools"
	"github.com/arrowhead-go/arrowhead/core/tools/coretools"
	"github.com/arrowhead-go/arrowhead/core/tools/data"
	"github.com/arrowhead-go/arrowhead/core/tools/docs"
	"github.com/arrowhead-go/arrowhead/core/tools/exectools"
	"github.com/arrowhead-go/arrowhead/core/tools/memorytools"
	"github.com/arrowhead-go/arrowhead/core/tools/notify"
	"github.com/arrowhead-go/arrowhead/core/tools/repo"
	"github.com/arrowhead-go/arrowhead/core/tools/tasktools"
	"github.com/arrowhead-go/arrowhead/policies"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Version is the build version reported by the server and the CLI.
var Version = "0.1.0-dev"

// ServerName is the MCP server name.
const ServerName = "arrowhead"

//go:embed welcome.txt
var welcomeText []byte

// DefaultJailRoot is ARROWHEAD_JAIL_ROOT's default; only that directory is
// created (with a welcome.txt sample) when missing.
const DefaultJailRoot = "sandbox"

// Options adjust the assembly.
type Options struct {
	// AuditWriter receives the audit log (stdout over HTTP, stderr over
	// stdio, where stdout is the protocol). Nil discards it.
	AuditWriter io.Writer
	// LogWriter receives operator log lines; nil discards them.
	LogWriter io.Writer
	// Resolver resolves egress host names; nil is net.DefaultResolver.
	// Tests substitute a fake.
	Resolver ports.Resolver
	// Clock is the time source; nil is the system clock.
	Clock ports.Clock
}

// Runtime is an assembled application and the adapters behind it.
type Runtime struct {
	App      *core.App
	Settings *settings.Settings
	// Audit is the audit sink the chain writes to; transports use it for
	// refusals made before the chain (401, host, body size).
	Audit ports.AuditSink
	// Logger is the operator log.
	Logger *telemetry.Logger
	// Verifier checks bearer tokens; nil when auth is off.
	Verifier *auth.Verifier
	// DPoP checks DPoP proofs; nil when ARROWHEAD_OAUTH_DPOP is off.
	DPoP *auth.DPoP
	// Health lists every configured dependency for /ready.
	Health []ports.HealthReporter
	// MetricsAddr is where the Prometheus endpoint listens; nil when
	// ARROWHEAD_METRICS_ADDR is empty.
	MetricsAddr net.Addr

	shared *sqlite.Store // the store processes share, once a family needs it
	// signer is the attestation key (attest.go), loaded once per Build.
	signer *signing.Key
	// opening is the shared store's open under way (openStoreEarly).
	opening *storeOpen
	// redis is the Redis client, when ARROWHEAD_REDIS_URL is set.
	redis *goredis.Client
	// pools are the PostgreSQL pools by DSN: adapters configured with the
	// same database share one.
	pools   map[string]*postgres.Pool
	closers []func(context.Context) error
}

// Build assembles the application described by s.
func Build(ctx context.Context, s *settings.Settings, o Options) (_ *Runtime, err error) {
	// rt is not the named result: a failing return sets that to nil before
	// this deferred Close releases what was already opened.
	rt := &Runtime{Settings: s}
	defer func() {
		if err != nil {
			_ = rt.Close(context.WithoutCancel(ctx))
		}
	}()
	if err := CheckStateNotServed(s); err != nil {
		return nil, err
	}
	rt.openStoreEarly(s)
	clock := o.Clock
	if clock == nil {
		clock = ports.SystemClock{}
	}
	if rt.signer, err = signer(s); err != nil {
		return nil, err
	}
	auditW, logW := o.AuditWriter, o.LogWriter
	if auditW == nil {
		auditW = io.Discard
	}
	if logW == nil {
		logW = io.Discard
	}
	tel, bridge, err := rt.openTelemetry(ctx, s, s.MetricsAddr != "")
	if err != nil {
		return nil, err
	}
	if rt.Logger, err = telemetry.NewLogger(logW, "info", bridge...); err != nil {
		return nil, fmt.Errorf("starting the operator log: %w", err)
	}
	logger := rt.Logger
	rt.closers = append(rt.closers, func(context.Context) error { _ = logger.Sync(); return nil })
	if rt.Audit, err = rt.auditSink(s, rt.signer, auditW, bridge); err != nil {
		return nil, err
	}
	// Export failures name the collector and the error: log a fixed event
	// instead of OpenTelemetry's default (stderr, the audit stream over
	// stdio), and only locally, or each failed export would queue a record
	// for the same failing exporter.
	exportErrors := rt.Logger.LocalOnly()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) { exportErrors.Warn("telemetry export error") }))
	if h := tel.MetricsHandler(); h != nil {
		if err := rt.serveMetrics(s.MetricsListenAddr(), h); err != nil {
			return nil, err
		}
	}

	rates, err := rt.rateStore(ctx, clock)
	if err != nil {
		return nil, err
	}
	authorizer, err := Authorizer(s)
	if err != nil {
		return nil, err
	}
	if s.AuthEnabled {
		if err := rt.openVerifier(ctx); err != nil {
			return nil, err
		}
		if err := rt.openDPoP(rates, clock); err != nil {
			return nil, err
		}
	}

	resolver := o.Resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	egress, err := httpx.New(httpx.Config{
		AllowedHosts:  s.EgressAllowedHosts,
		AllowedPorts:  s.EgressAllowedPorts,
		InternalHosts: s.LLMInternalHosts,
		UserAgent:     ServerName + "/" + Version,
	}, resolver)
	if err != nil {
		return nil, fmt.Errorf("ARROWHEAD_EGRESS_ALLOWED_HOSTS: %w", err)
	}
	sandbox, err := openSandbox(s.JailRoot)
	if err != nil {
		return nil, err
	}
	rt.closers = append(rt.closers, func(context.Context) error { return sandbox.Close() })

	corpus, err := fs.OpenDocuments(fs.DocumentsConfig{
		Root:          s.DocsRoot,
		Extensions:    s.DocAllowedExtensions,
		MaxReadBytes:  int64(max(s.DocMaxBytes, s.ScanPerFileMaxBytes)),
		MaxWriteBytes: int64(s.DocWriteMaxBytes),
		QuotaBytes:    int64(s.DocWriteQuotaBytes),
	})
	if err != nil {
		return nil, errors.New("ARROWHEAD_DOCS_ROOT: the document corpus cannot be opened")
	}
	repoStore, tagger, err := rt.openRepo(s)
	if err != nil {
		return nil, err
	}
	if s.StateDSN != "" {
		// First, so a variable naming the same database shares the pool
		// at the state database's size.
		if _, err := rt.statePool(ctx, s); err != nil {
			return nil, err
		}
	}
	// One secret scanner per process: its placeholder tags are keyed, so
	// every tool, doc_scan and a background scan tag the same secret
	// alike, and it knows the server's own secret settings whatever their
	// shape.
	scanner := security.NewRandomScanner().WithKnown(s.SecretValues()...)
	conn, err := rt.openData(ctx, s, egress)
	if err != nil {
		return nil, err
	}
	if s.EmbeddingProvider == "http" {
		// A remote embedding model is a model request: redacted always.
		conn.embedder = security.RedactEmbedder(conn.embedder, scanner)
	}
	execP, err := rt.openExec(ctx, s, repoStore)
	if err != nil {
		return nil, err
	}
	notifyPorts, err := openNotify(s, resolver, clock, authorizer, scanner)
	if err != nil {
		return nil, err
	}
	completer, err := openCompleter(s, egress)
	if err != nil {
		return nil, err
	}
	if completer != nil {
		// Every request to the model backend passes the scanner, whatever
		// ARROWHEAD_REDACT_READS says.
		completer = security.RedactCompleter(completer, scanner)
	}
	ctxPorts, err := rt.openContext(ctx, s)
	if err != nil {
		return nil, err
	}
	memory, memoryEmbedder, err := rt.openMemory(ctx, s, conn.embedder)
	if err != nil {
		return nil, err
	}
	docsConfig, err := docs.Family.Config(s)
	if err != nil {
		return nil, err
	}
	tasks, err := rt.openTasks(ctx, s, docs.NewScanner(docsConfig, corpus, authorizer, scanner), clock)
	if err != nil {
		return nil, err
	}
	board, err := rt.killBoard(ctx, clock)
	if err != nil {
		return nil, err
	}
	canaryTokens, err := readCanaryFile(s.CanaryFile)
	if err != nil {
		return nil, err
	}
	rt.App, err = core.New(core.Deps{
		Settings:     s,
		Authorizer:   authorizer,
		Rates:        rates,
		Audit:        rt.Audit,
		Tracer:       tel.Tracer(),
		Metrics:      tel.Metrics(),
		Clock:        clock,
		KillBoard:    board,
		CanaryTokens: canaryTokens,
		Scanner:      scanner,
		Signer:       rt.signer,
		Version:      Version,
		Families: families(s, familyPorts{egress: egress, sandbox: sandbox, corpus: corpus, authorizer: authorizer, connectors: conn,
			exec: execP, notify: notifyPorts, repo: repoStore, tagger: tagger, completer: completer, context: ctxPorts,
			memory: memory, memoryEmbedder: memoryEmbedder, tasks: tasks, scanner: scanner, clock: clock}),
	})
	if err != nil {
		return nil, err
	}
	if board != nil {
		rt.watchKills(ctx)
	}
	return rt, nil
}

// familyPorts are the opened adapters the families draw on.
type familyPorts struct {
	egress     ports.Egress
	sandbox    ports.FileJail
	corpus     ports.DocumentStore
	authorizer ports.Authorizer
	connectors
	// exec is the exec family's runner, repository view and toolchains;
	// zero unless it is served.
	exec   execPorts
	notify notify.Ports
	// repo is nil when ARROWHEAD_REPO_ROOT names no directory; tagger is
	// nil without universal-ctags on PATH.
	repo   ports.RepoStore
	tagger ports.SymbolTagger
	// completer is nil with ARROWHEAD_LLM_PROVIDER=none.
	completer ports.Completer
	context   contextPorts
	// memory is nil unless the profile serves the memory family;
	// memoryEmbedder is nil unless memories are recalled semantically.
	memory         ports.MemoryBackend
	memoryEmbedder ports.Embedder
	// tasks is nil unless the profile serves the tasks family.
	tasks   ports.TaskRegistry
	scanner *security.Scanner
	clock   ports.Clock
}

// families is every family with the ports it uses: one line per family.
// The catalog listing calls it with no adapter open and serves none of it.
func families(s *settings.Settings, p familyPorts) []core.Member {
	scanner := p.scanner
	return []core.Member{
		coretools.Family.With(coretools.Ports{Egress: p.egress, Sandbox: p.sandbox}),
		docs.Family.With(docs.Ports{Store: p.corpus, Egress: p.egress, Authorizer: p.authorizer, Scanner: scanner}),
		data.Family.With(data.Ports{Authorizer: p.authorizer, Vetter: sqlguard.New(sqlguard.Config{MaxLength: s.SQLQueryMaxLength}),
			Embedder: p.embedder, Documents: p.corpus, SQL: p.sql, Vectors: p.vectors, Writer: p.writer}),
		exectools.Family.With(exectools.Ports{Runner: p.exec.runner, Authorizer: p.authorizer, Scanner: scanner, Repo: p.exec.repo, Toolchain: p.exec.toolchain}),
		notify.Family.With(p.notify),
		repo.Family.With(repo.Ports{Repo: p.repo, Authorizer: p.authorizer, Tagger: p.tagger, Scanner: scanner}),
		assist.Family.With(assist.Ports{Completer: p.completer, Repo: p.repo, Authorizer: p.authorizer, Scanner: scanner}),
		contexttools.Family.With(contexttools.Ports{Sets: p.context.sets, Corpus: p.corpus, Repo: p.repo, Authorizer: p.authorizer,
			Scanner: scanner, Tokenizer: p.context.tokenizer, Embedder: p.embedder, Vectors: p.vectors}),
		memorytools.Family.With(memorytools.Ports{Memory: p.memory, Embedder: p.memoryEmbedder, Authorizer: p.authorizer, Clock: p.clock}),
		tasktools.Family.With(tasktools.Ports{Tasks: p.tasks, Clock: p.clock}),
	}
}

// Authorizer returns the per-resource authorizer: the policy (inline, or the
// embedded default) when auth is on; allow-all for the local operator when
// auth is off.
func Authorizer(s *settings.Settings) (ports.Authorizer, error) {
	if !s.AuthEnabled {
		return authz.AllowAll{}, nil
	}
	doc := policies.Default()
	if s.AuthzPolicy != "" {
		doc = []byte(s.AuthzPolicy)
	}
	p, err := authz.Parse(doc)
	if err != nil {
		return nil, fmt.Errorf("ARROWHEAD_AUTHZ_POLICY: %w", err)
	}
	return p, nil
}

// The per-process store takes back the tokens the shared bucket refused.
var _ redis.Refunder = (*inproc.RateStore)(nil)

// rateStore is the rate-limit store: in process, or shared through Redis
// with the in-process store as its fallback. A Redis that does not answer
// at start is a warning line (the limiter runs per process until it does),
// not only a degraded /ready; the check costs at most one call timeout.
func (rt *Runtime) rateStore(ctx context.Context, clock ports.Clock) (ports.RateStore, error) {
	local := inproc.NewRateStore(clock)
	if rt.Settings.RedisURL == "" {
		return local, nil
	}
	logger := rt.Logger
	redis.SetLogger(func(event string) { logger.Warn(event) })
	client, err := redis.NewClientFromURL(rt.Settings.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("ARROWHEAD_REDIS_URL: %w", err)
	}
	rt.closers = append(rt.closers, func(context.Context) error { return client.Close() })
	rt.redis = client
	store, err := redis.NewRateStore(client, local, redis.WithClock(clock),
		redis.WithFallbackShare(rt.Settings.RateLimitFallbackShare),
		redis.WithOutageReport(func(sh redis.Share) {
			logger.Warn("redis unreachable: rate limits fall back to this replica's share",
				zap.Int("share_percent", sh.Percent), zap.Int("replicas_seen_alive", sh.Replicas))
		}))
	if err != nil {
		return nil, fmt.Errorf("ARROWHEAD_REDIS_URL: %w", err)
	}
	rt.Health = append(rt.Health, store)
	if store.Health(ctx) != ports.HealthOK {
		logger.Warn("ARROWHEAD_REDIS_URL: Redis does not answer at start; each replica enforces only its share of every ceiling until it does")
	}
	// The presence heartbeat sets the outage share; it stops (and leaves
	// the set) before the client closes, since closers run last to first.
	hbCtx, stopHB := context.WithCancel(context.Background())
	hbDone := make(chan struct{})
	go func() { defer close(hbDone); store.Run(hbCtx) }()
	rt.closers = append(rt.closers, func(context.Context) error { stopHB(); <-hbDone; return nil })
	return store, nil
}

func (rt *Runtime) openVerifier(ctx context.Context) error {
	s := rt.Settings
	cfg := auth.Config{
		Issuer:                 s.Issuer(),
		Audience:               s.Audience(),
		ScopeClaim:             s.OAuthScopeClaim,
		RequireAccessTokenType: s.OAuthRequireAtJWT,
	}
	if u := s.JWKSURI(); u != "" {
		cfg.JWKSURI = u
	} else {
		cfg.PublicKeyPEM = s.OAuthPublicKey
	}
	v, err := auth.NewVerifier(ctx, cfg)
	if err != nil {
		if cfg.JWKSURI != "" {
			return fmt.Errorf("ARROWHEAD_OAUTH_JWKS_URI: %w", err)
		}
		return fmt.Errorf("ARROWHEAD_OAUTH_PUBLIC_KEY: %w", err)
	}
	rt.Verifier = v
	rt.Health = append(rt.Health, v)
	return nil
}

// openSandbox opens the read_file jail, creating the default one with its
// welcome sample on first run.
func openSandbox(root string) (*fs.Jail, error) {
	if _, err := os.Stat(root); errors.Is(err, os.ErrNotExist) && filepath.Clean(root) == DefaultJailRoot {
		if err := os.MkdirAll(root, 0o750); err != nil {
			return nil, errors.New("ARROWHEAD_JAIL_ROOT: the default sandbox directory cannot be created")
		}
		if err := os.WriteFile(filepath.Join(root, "welcome.txt"), welcomeText, 0o640); err != nil {
			return nil, errors.New("ARROWHEAD_JAIL_ROOT: the welcome sample cannot be written")
		}
	}
	j, err := fs.OpenJail(root)
	if err != nil {
		return nil, errors.New("ARROWHEAD_JAIL_ROOT: the sandbox directory cannot be opened")
	}
	return j, nil
}

// Limits of the metrics listener: a scrape is one small GET.
const (
	metricsReadTimeout  = 10 * time.Second
	metricsWriteTimeout = 30 * time.Second
)

// serveMetrics serves the Prometheus scrape endpoint, GET /metrics only, on
// its own listener at addr (ARROWHEAD_METRICS_ADDR), never on the public
// one. It runs until Close.
func (rt *Runtime) serveMetrics(addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("ARROWHEAD_METRICS_ADDR: cannot listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: metricsReadTimeout,
		ReadTimeout:       metricsReadTimeout,
		WriteTimeout:      metricsWriteTimeout,
		MaxHeaderBytes:    16 << 10,
	}
	go func() { _ = srv.Serve(ln) }()
	rt.MetricsAddr = ln.Addr()
	rt.closers = append(rt.closers, srv.Shutdown)
	rt.Logger.Info("serving metrics", zap.String("addr", ln.Addr().String()))
	return nil
}

// Close releases every adapter, flushing the audit log and telemetry.
func (rt *Runtime) Close(ctx context.Context) error {
	var errs []error
	for i := len(rt.closers) - 1; i >= 0; i-- {
		if err := rt.closers[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	rt.closers = nil
	return errors.Join(errs...)
}
