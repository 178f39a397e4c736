// Package redis holds the adapters backed by Redis (github.com/redis/go-redis/v9):
// the rate-limit store that shares one budget per caller and component across
// every replica.
package redis

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Defaults of the Redis rate store.
const (
	// DefaultKeyPrefix namespaces every bucket key.
	DefaultKeyPrefix = "arrowhead:rl:"
	// DefaultCallTimeout bounds one rate-limit check against Redis. A check
	// sits on every guarded call, so a slow Redis must cost little before
	// the store falls back to its per-process buckets.
	DefaultCallTimeout = 250 * time.Millisecond
	// DefaultRetryInterval is how long the store stays on its fallback after
	// Redis failed before one call tries Redis again.
	DefaultRetryInterval = time.Second
	// MaxPerMinute is the highest ceiling the script computes exactly (its
	// numbers are doubles, and capacity x 60e6 must stay below 2^53). Higher
	// ceilings are clamped to it: still a limit, far above any real one.
	MaxPerMinute = 1_000_000

	// expiryMargin keeps a bucket a little beyond the instant it would be
	// full again, after which it is indistinguishable from no bucket.
	expiryMargin = time.Second
	// healthName is what this store reports itself as on /ready.
	healthName = "redis"
	// shareKeyMarker starts the per-process key of a bucket's outage
	// share (see Take); no caller key starts with a NUL.
	shareKeyMarker = "\x00share\x00"
)

// Errors of the Redis adapter. None of them carries a URL, a key or a
// caller's value.
var (
	ErrNilClient   = errors.New("redis rate store needs a client")
	ErrNilFallback = errors.New("redis rate store needs a fallback store (it never runs unlimited)")
	// ErrNoContextTimeouts refuses a client that ignores context deadlines:
	// without them a hung Redis would hold every call for the client's
	// socket timeouts instead of the store's per-call timeout.
	ErrNoContextTimeouts = errors.New("redis client must set ContextTimeoutEnabled so per-call timeouts apply")
	// ErrInvalidLimit is returned by Take for a ceiling that is not positive.
	ErrInvalidLimit = errors.New("rate limit must be a positive number of calls per minute")
	// ErrInvalidURL is returned by NewClientFromURL. Its detail never quotes
	// the URL, which may carry a password.
	ErrInvalidURL = errors.New("invalid Redis URL")

	errUnexpectedReply = errors.New("unexpected reply from the rate-limit script")
)

// takeScript is one token-bucket check, atomic on the Redis server.
//
// KEYS[1] is the bucket, a hash holding tokens and ts; KEYS[2] is the flow
// marks' version counter (see flows.go), read so the exfiltration guard's
// freshness check rides on this round trip. ARGV[1] is the capacity, which
// is also the refill per minute; ARGV[2] is the expiry margin in
// milliseconds. It returns {allowed (0 or 1), retry-after in ms, flow
// version}.
//
// Time comes from the server's own clock (TIME), so replicas whose clocks
// disagree still draw on one budget. Levels are integers in micro-token units
// (one token is 60e6 units; the bucket refills capacity units a microsecond),
// which keeps the arithmetic exact in Lua's doubles. A refused check writes
// nothing, so a caller hammering an empty bucket adds no write traffic.
var takeScript = goredis.NewScript(`
if redis.replicate_commands then redis.replicate_commands() end
local capacity = tonumber(ARGV[1])
local margin = tonumber(ARGV[2])
local unit = 60000000
local full = capacity * unit

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local fv = tonumber(redis.call('GET', KEYS[2]) or '0')

local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local level = tonumber(state[1])
local ts = tonumber(state[2])
if level == nil or ts == nil then
  level = full
elseif now > ts then
  level = level + math.min(now - ts, unit) * capacity
end
if level > full then
  level = full
end

if level < unit then
  return {0, math.ceil((unit - level) / capacity / 1000), fv}
end
level = level - unit
redis.call('HSET', KEYS[1], 'tokens', level, 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((full - level) / capacity / 1000) + margin)
return {1, 0, fv}
`)

// Option adjusts a RateStore.
type Option func(*config)

type config struct {
	prefix        string
	callTimeout   time.Duration
	retryInterval time.Duration
	clock         ports.Clock
	// sharePercent, when positive, fixes the outage share (percent of each
	// ceiling) instead of deriving it from the replicas seen alive.
	sharePercent int
	// heartbeat is the presence period (DefaultHeartbeat).
	heartbeat time.Duration
	// outage is told once when an outage starts (nil: nobody).
	outage func(Share)
}

// WithKeyPrefix sets the namespace of bucket keys (DefaultKeyPrefix).
func WithKeyPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// WithCallTimeout bounds each Redis round trip (DefaultCallTimeout); d <= 0
// keeps the default.
func WithCallTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.callTimeout = d
		}
	}
}

// WithRetryInterval sets how long the store stays on its fallback after a
// Redis failure before trying Redis again (DefaultRetryInterval); d <= 0
// keeps the default.
func WithRetryInterval(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.retryInterval = d
		}
	}
}

// WithClock sets the clock that times the retry interval (the system clock by
// default). Bucket arithmetic always uses the Redis server's clock.
func WithClock(clock ports.Clock) Option {
	return func(c *config) {
		if clock != nil {
			c.clock = clock
		}
	}
}

// WithFallbackShare fixes the share of each ceiling (in percent, 1 to 100)
// this replica enforces while Redis is unreachable, instead of deriving it
// from the replicas last seen alive (ARROWHEAD_RATE_LIMIT_FALLBACK_SHARE).
// percent <= 0 keeps the derived share.
func WithFallbackShare(percent int) Option {
	return func(c *config) {
		if percent > 0 {
			c.sharePercent = min(percent, 100)
		}
	}
}

// WithOutageReport sets report, told once each time an outage starts with
// the share this replica then enforces (the operator log line).
func WithOutageReport(report func(Share)) Option {
	return func(c *config) { c.outage = report }
}

// WithHeartbeat sets the presence period of Run (DefaultHeartbeat); d <= 0
// keeps the default.
func WithHeartbeat(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.heartbeat = d
		}
	}
}

// RateStore is a ports.RateStore whose buckets live in Redis, so every
// replica pointed at the same Redis shares one budget per key. Each check is
// one atomic script run (EVALSHA, loaded on first use).
//
// Bucket keys are the prefix followed by the hex SHA-256 of the caller's key,
// so subjects and component names never shape a Redis key.
//
// The per-process fallback store is charged for every call this replica
// serves, whether Redis is up or not, and is asked first: a call it refuses
// is refused without a Redis round trip, and a call Redis refuses is given
// back to it (when it can take a refund, as the in-memory store can). So the
// fallback always holds what is left of this replica's budget, and an
// outage, or a Redis that flaps between up and down (or restarts empty),
// never hands a caller a fresh budget: one replica serves at most one
// budget per key however Redis behaves, and while Redis answers all
// replicas together serve at most one.
//
// An outage never widens a budget across replicas either. While Redis is
// unreachable each replica enforces only its share of every ceiling: the
// ceiling divided by the replicas it last saw alive through Redis (see
// Run), or the fixed percentage of WithFallbackShare, rounded down and at
// least one call a minute. The share is a second per-process bucket per
// key, charged for every call this replica serves while Redis is up too
// (an in-memory operation, no round trip), so an outage starts from what
// this replica recently used, not from a fresh share. With N replicas
// alive the replicas together serve at most the ceiling during an outage
// (plus, in its first minute, what was served through Redis before it
// that the shares had not yet seen).
//
// When Redis fails or exceeds the call timeout, the share's answer stands
// and the store is degraded: further checks skip Redis, and once per
// retry interval a single check tries it again. The first success, or a
// successful health check, ends the degraded state. The start of each
// outage is reported once (WithOutageReport) with the share in force.
//
// A RateStore does not own its client and is safe for concurrent use.
// Only Run, which keeps this replica's presence in Redis and its copy of the
// flow marks, runs loops.
// It is also a ports.HealthReporter.
type RateStore struct {
	client   *goredis.Client
	fallback ports.RateStore
	cfg      config
	marginMS int64

	degraded atomic.Bool
	// retryAt is the unix-nano instant after which one check may try Redis
	// again; meaningful only while degraded.
	retryAt atomic.Int64

	// replicaID names this replica in the presence set.
	replicaID string
	// alive is how many replicas the last heartbeat saw (this one
	// included); 1 until a heartbeat has answered.
	alive atomic.Int64

	// flows is this replica's copy of every replica's flow marks, kept
	// by Run (flowsync.go).
	flows flowSync
}

var (
	_ ports.RateStore      = (*RateStore)(nil)
	_ ports.HealthReporter = (*RateStore)(nil)
)

// NewRateStore returns a store over client that answers from fallback while
// Redis is unavailable. The client must have ContextTimeoutEnabled (clients
// from NewClientFromURL do).
func NewRateStore(client *goredis.Client, fallback ports.RateStore, opts ...Option) (*RateStore, error) {
	switch {
	case client == nil:
		return nil, ErrNilClient
	case fallback == nil:
		return nil, ErrNilFallback
	case !client.Options().ContextTimeoutEnabled:
		return nil, ErrNoContextTimeouts
	}
	cfg := config{
		prefix:        DefaultKeyPrefix,
		callTimeout:   DefaultCallTimeout,
		retryInterval: DefaultRetryInterval,
		clock:         ports.SystemClock{},
		heartbeat:     DefaultHeartbeat,
	}
	for _, o := range opts {
		o(&cfg)
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("naming this replica: %w", err)
	}
	s := &RateStore{
		client:    client,
		fallback:  fallback,
		cfg:       cfg,
		marginMS:  expiryMargin.Milliseconds(),
		replicaID: hex.EncodeToString(id[:]),
	}
	s.alive.Store(1)
	s.flows.init()
	return s, nil
}

// Refunder is a fallback store that can give back a token its Take
// granted; inproc.RateStore is one. A fallback without it stays charged for
// calls Redis refused, which only narrows this replica's budget.
type Refunder interface {
	Refund(ctx context.Context, key string, perMinute int)
}

// Take consumes one token from key's bucket in the fallback store and, while
// Redis is available, one from the shared bucket in Redis; the call is
// allowed only when both allow it. While Redis is unavailable the second
// bucket is this replica's share of the ceiling instead. It returns an
// error only for perMinute <= 0 or when the fallback itself fails.
func (s *RateStore) Take(ctx context.Context, key string, perMinute int) (ports.RateDecision, error) {
	if perMinute <= 0 {
		return ports.RateDecision{}, ErrInvalidLimit
	}
	local, err := s.fallback.Take(ctx, key, perMinute)
	if err != nil || !local.Allowed {
		return local, err
	}
	shareKey := shareKeyMarker + key
	share := s.Share().Of(perMinute)
	if s.shouldTryRedis() {
		shared, err := s.takeRedis(ctx, key, min(perMinute, MaxPerMinute))
		if err == nil {
			s.degraded.Store(false)
			if !shared.Allowed {
				s.refund(ctx, key, perMinute)
				return shared, nil
			}
			// Keep the share's account while Redis is up; its answer
			// does not matter until an outage.
			_, _ = s.fallback.Take(ctx, shareKey, share)
			return shared, nil
		}
		// A caller that gave up is no evidence against Redis.
		if ctx.Err() != nil {
			return local, nil
		}
		s.markDegraded()
	}
	d, err := s.fallback.Take(ctx, shareKey, share)
	if err != nil || !d.Allowed {
		s.refund(ctx, key, perMinute)
	}
	return d, err
}

// refund gives key's per-process token back when the fallback can take it.
func (s *RateStore) refund(ctx context.Context, key string, perMinute int) {
	if r, ok := s.fallback.(Refunder); ok {
		r.Refund(ctx, key, perMinute)
	}
}

func (s *RateStore) takeRedis(ctx context.Context, key string, perMinute int) (ports.RateDecision, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.callTimeout)
	defer cancel()
	sent := monoNow()
	res, err := takeScript.Run(ctx, s.client, []string{s.RedisKey(key), s.flowVersionKey()}, perMinute, s.marginMS).Int64Slice()
	if err != nil {
		return ports.RateDecision{}, err
	}
	if len(res) != 3 || res[0] < 0 || res[0] > 1 || res[1] < 0 || res[2] < 0 {
		return ports.RateDecision{}, errUnexpectedReply
	}
	s.observeFlowVersion(uint64(res[2]), sent)
	if res[0] == 1 {
		return ports.RateDecision{Allowed: true}, nil
	}
	return ports.RateDecision{RetryAfter: time.Duration(res[1]) * time.Millisecond}, nil
}

// shouldTryRedis is true while healthy; while degraded it is true for one
// caller per retry interval.
func (s *RateStore) shouldTryRedis() bool {
	if !s.degraded.Load() {
		return true
	}
	next := s.retryAt.Load()
	now := s.cfg.clock.Now().UnixNano()
	if now < next {
		return false
	}
	return s.retryAt.CompareAndSwap(next, now+int64(s.cfg.retryInterval))
}

func (s *RateStore) markDegraded() {
	s.retryAt.Store(s.cfg.clock.Now().UnixNano() + int64(s.cfg.retryInterval))
	if s.degraded.CompareAndSwap(false, true) && s.cfg.outage != nil {
		s.cfg.outage(s.Share())
	}
}

// RedisKey returns the Redis key holding key's bucket, for operators who
// need to inspect or reset one.
func (s *RateStore) RedisKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return s.cfg.prefix + hex.EncodeToString(sum[:])
}

// Degraded reports whether the store is answering from its fallback.
func (s *RateStore) Degraded() bool { return s.degraded.Load() }

// Name returns the dependency name shown on /ready.
func (s *RateStore) Name() string { return healthName }

// Health pings Redis: ok when it answers, degraded when it does not (the
// limiter then runs on its fallback). An answer ends the degraded state at
// once; a failure starts it, so checks stop waiting on Redis.
func (s *RateStore) Health(ctx context.Context) ports.HealthState {
	pctx, cancel := context.WithTimeout(ctx, s.cfg.callTimeout)
	defer cancel()
	if err := s.client.Ping(pctx).Err(); err != nil {
		if ctx.Err() == nil {
			s.markDegraded()
		}
		return ports.HealthDegraded
	}
	s.degraded.Store(false)
	return ports.HealthOK
}

// NewClientFromURL returns a client for a redis://, rediss:// or unix:// URL
// (go-redis URL options such as ?dial_timeout= are honoured) with context
// deadlines enabled, as NewRateStore requires. It does not connect. Errors
// wrap ErrInvalidURL and never quote the URL, which may carry a password.
func NewClientFromURL(rawURL string) (*goredis.Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: it does not parse as a URL", ErrInvalidURL)
	}
	switch u.Scheme {
	case "redis", "rediss", "unix":
	default:
		return nil, fmt.Errorf("%w: the scheme must be redis, rediss or unix", ErrInvalidURL)
	}
	opt, err := goredis.ParseURL(rawURL)
	if err != nil {
		// go-redis quotes parts of the URL in its errors: drop the text.
		return nil, fmt.Errorf("%w: unsupported host, database path or query option", ErrInvalidURL)
	}
	opt.ContextTimeoutEnabled = true
	return goredis.NewClient(opt), nil
}

// quietLogger receives go-redis's own log lines as a fixed event, since their
// text names addresses and errors; install it with SetLogger.
type quietLogger struct{ report func(event string) }

func (q quietLogger) Printf(context.Context, string, ...any) { q.report("redis client error") }

// SetLogger routes go-redis's process-wide logging to report (fixed text
// only), instead of the standard logger on stderr, which over stdio is the
// audit stream.
func SetLogger(report func(event string)) {
	if report == nil {
		report = func(string) {}
	}
	goredis.SetLogger(quietLogger{report: report})
}
