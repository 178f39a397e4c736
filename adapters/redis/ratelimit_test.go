package redis_test

// These tests need no Redis server: they cover construction, key derivation,
// URL handling and the fallback path against an address nothing listens on.
// The script itself runs against a real redis-server in test/integration.

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/arrowhead-go/arrowhead/adapters/inproc"
	"github.com/arrowhead-go/arrowhead/adapters/redis"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

func newFakeClock() *portstest.Clock { return &portstest.Clock{T: time.Unix(1_700_000_000, 0)} }

// recordingStore is a fallback double: it records every call and answers
// with a fixed decision.
type recordingStore struct {
	mu       sync.Mutex
	keys     []string
	limits   []int
	decision ports.RateDecision
}

func (r *recordingStore) Take(_ context.Context, key string, perMinute int) (ports.RateDecision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys = append(r.keys, key)
	r.limits = append(r.limits, perMinute)
	return r.decision, nil
}

func (r *recordingStore) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.keys)
}

// commandCounter is a go-redis hook counting the commands a client sends.
type commandCounter struct{ scripts, pings atomic.Int64 }

func (c *commandCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (c *commandCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		switch cmd.Name() {
		case "evalsha", "eval":
			c.scripts.Add(1)
		case "ping":
			c.pings.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c *commandCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// deadAddr returns a loopback address nothing listens on: connecting is
// refused at once.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func deadClient(t *testing.T) (*goredis.Client, *commandCounter) {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{
		Addr:                  deadAddr(t),
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
	})
	t.Cleanup(func() { _ = c.Close() })
	counter := &commandCounter{}
	c.AddHook(counter)
	return c, counter
}

func newStore(t *testing.T, client *goredis.Client, fallback ports.RateStore, opts ...redis.Option) *redis.RateStore {
	t.Helper()
	s, err := redis.NewRateStore(client, fallback, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewRateStoreRefusesMissingParts(t *testing.T) {
	ok := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	noDeadlines := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = ok.Close(); _ = noDeadlines.Close() })
	tests := []struct {
		name     string
		client   *goredis.Client
		fallback ports.RateStore
		want     error
	}{
		{"nil client", nil, &recordingStore{}, redis.ErrNilClient},
		{"nil fallback", ok, nil, redis.ErrNilFallback},
		{"client ignores context deadlines", noDeadlines, &recordingStore{}, redis.ErrNoContextTimeouts},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := redis.NewRateStore(tc.client, tc.fallback)
			if !errors.Is(err, tc.want) || s != nil {
				t.Fatalf("NewRateStore = %v, %v; want nil, %v", s, err, tc.want)
			}
		})
	}
	if _, err := redis.NewRateStore(ok, &recordingStore{}); err != nil {
		t.Fatalf("a complete store was refused: %v", err)
	}
}

func TestRedisKeyIsPrefixedHashedAndStable(t *testing.T) {
	client, _ := deadClient(t)
	s := newStore(t, client, &recordingStore{})
	shape := regexp.MustCompile(`^arrowhead:rl:[0-9a-f]{64}$`)
	keys := []string{
		"alice\x00tool\x00calculate",
		"bob\x00tool\x00calculate",
		"alice\x00prompt\x00calculate",
		"{hash-tag}\r\n*3\r\n$3\r\nDEL\x00tool\x00x", // protocol and cluster-slot tricks
		"../../etc\x00tool\x00*",
		strings.Repeat("long-subject", 1000),
		"",
	}
	seen := map[string]string{}
	for _, k := range keys {
		rk := s.RedisKey(k)
		if !shape.MatchString(rk) {
			t.Errorf("RedisKey(%q) = %q, want prefix + 64 hex", k, rk)
		}
		if prev, dup := seen[rk]; dup {
			t.Errorf("%q and %q map to one Redis key", prev, k)
		}
		seen[rk] = k
		if again := s.RedisKey(k); again != rk {
			t.Errorf("RedisKey is not stable: %q then %q", rk, again)
		}
	}
	custom := newStore(t, client, &recordingStore{}, redis.WithKeyPrefix("tenant-a:rl:"))
	if got := custom.RedisKey("k"); !strings.HasPrefix(got, "tenant-a:rl:") || strings.TrimPrefix(got, "tenant-a:rl:") != strings.TrimPrefix(s.RedisKey("k"), redis.DefaultKeyPrefix) {
		t.Errorf("custom prefix key = %q", got)
	}
}

func TestTakeFallsBackWhenRedisIsDown(t *testing.T) {
	client, counter := deadClient(t)
	fallback := &recordingStore{decision: ports.RateDecision{Allowed: true}}
	s := newStore(t, client, fallback, redis.WithClock(newFakeClock()))

	d, err := s.Take(context.Background(), "alice\x00tool\x00calculate", 30)
	if err != nil {
		t.Fatalf("Take returned %v; a Redis failure must be absorbed by the fallback", err)
	}
	if d != fallback.decision {
		t.Fatalf("decision = %+v, want the fallback's %+v", d, fallback.decision)
	}
	if counter.scripts.Load() != 1 {
		t.Fatalf("%d script calls, want 1 attempt at Redis", counter.scripts.Load())
	}
	// The caller's own bucket, then this replica's share of it (alone, as
	// far as it knows: the whole ceiling).
	if fallback.calls() != 2 || fallback.keys[0] != "alice\x00tool\x00calculate" || fallback.limits[0] != 30 ||
		!strings.HasSuffix(fallback.keys[1], "alice\x00tool\x00calculate") || fallback.keys[1] == fallback.keys[0] || fallback.limits[1] != 30 {
		t.Fatalf("fallback saw keys %q limits %v, want the caller's key, then its share", fallback.keys, fallback.limits)
	}
	if !s.Degraded() {
		t.Fatal("store not marked degraded after Redis failed")
	}
}

// TestFallbackRefusalEndsTheCheck: the per-process bucket is asked first;
// what it refuses never costs a Redis round trip.
func TestFallbackRefusalEndsTheCheck(t *testing.T) {
	client, counter := deadClient(t)
	fallback := &recordingStore{decision: ports.RateDecision{RetryAfter: 7 * time.Second}}
	s := newStore(t, client, fallback)
	d, err := s.Take(context.Background(), "k", 30)
	if err != nil || d != fallback.decision {
		t.Fatalf("Take = %+v, %v; want the fallback's refusal %+v", d, err, fallback.decision)
	}
	if counter.scripts.Load() != 0 || s.Degraded() {
		t.Fatalf("a locally refused call reached Redis (%d scripts, degraded %v)", counter.scripts.Load(), s.Degraded())
	}
}

func TestDegradedStoreRetriesRedisOncePerInterval(t *testing.T) {
	client, counter := deadClient(t)
	clock := newFakeClock()
	fallback := &recordingStore{decision: ports.RateDecision{Allowed: true}}
	s := newStore(t, client, fallback, redis.WithClock(clock), redis.WithRetryInterval(time.Second))
	ctx := context.Background()

	if _, err := s.Take(ctx, "k", 10); err != nil { // fails over
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if _, err := s.Take(ctx, "k", 10); err != nil {
			t.Fatal(err)
		}
	}
	if got := counter.scripts.Load(); got != 1 {
		t.Fatalf("%d Redis attempts while degraded within the interval, want 1 (the first)", got)
	}
	clock.Advance(time.Second - time.Nanosecond)
	_, _ = s.Take(ctx, "k", 10)
	if got := counter.scripts.Load(); got != 1 {
		t.Fatalf("Redis retried before the interval elapsed (%d attempts)", got)
	}

	// Once the interval has passed, many concurrent checks probe once.
	clock.Advance(time.Nanosecond)
	var wg sync.WaitGroup
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Take(ctx, "k", 10); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := counter.scripts.Load(); got != 2 {
		t.Fatalf("%d Redis attempts after one interval, want 2", got)
	}
	if fallback.calls() != 2*(1+100+1+32) {
		t.Fatalf("fallback answered %d checks, want every one (own bucket and share)", fallback.calls())
	}
	if !s.Degraded() {
		t.Fatal("a failed probe ended the degraded state")
	}
}

func TestCancelledCallerDoesNotDegradeTheStore(t *testing.T) {
	client, _ := deadClient(t)
	fallback := &recordingStore{decision: ports.RateDecision{Allowed: true}}
	s := newStore(t, client, fallback)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, err := s.Take(ctx, "k", 10)
	if err != nil || !d.Allowed || fallback.calls() != 1 {
		t.Fatalf("Take = %+v, %v with %d fallback calls; want the fallback's answer", d, err, fallback.calls())
	}
	if s.Degraded() {
		t.Fatal("a caller's own cancellation marked Redis degraded")
	}
}

func TestTakeRefusesInvalidLimit(t *testing.T) {
	client, counter := deadClient(t)
	fallback := &recordingStore{}
	s := newStore(t, client, fallback)
	for _, n := range []int{0, -5} {
		if _, err := s.Take(context.Background(), "k", n); !errors.Is(err, redis.ErrInvalidLimit) {
			t.Errorf("Take(perMinute=%d) error = %v, want ErrInvalidLimit", n, err)
		}
	}
	if counter.scripts.Load() != 0 || fallback.calls() != 0 {
		t.Fatal("an invalid limit reached a store")
	}
}

func TestHealthWhenRedisIsDown(t *testing.T) {
	client, counter := deadClient(t)
	s := newStore(t, client, &recordingStore{})
	if s.Name() != "redis" {
		t.Fatalf("Name = %q, want redis", s.Name())
	}
	if got := s.Health(context.Background()); got != ports.HealthDegraded {
		t.Fatalf("Health = %q, want degraded", got)
	}
	if counter.pings.Load() != 1 {
		t.Fatalf("Health sent %d pings, want 1", counter.pings.Load())
	}
	if !s.Degraded() {
		t.Fatal("a failed health check did not move the limiter to its fallback")
	}
}

func TestNewClientFromURL(t *testing.T) {
	tests := []struct {
		url      string
		addr     string
		network  string
		db       int
		password string
	}{
		{"redis://localhost:6379", "localhost:6379", "tcp", 0, ""},
		{"redis://:pw@127.0.0.1:6380/2", "127.0.0.1:6380", "tcp", 2, "pw"},
		{"rediss://user:pw@cache.internal", "cache.internal:6379", "tcp", 0, "pw"},
		{"unix:///run/redis.sock?db=3", "/run/redis.sock", "unix", 3, ""},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			c, err := redis.NewClientFromURL(tc.url)
			if err != nil {
				t.Fatalf("NewClientFromURL: %v", err)
			}
			t.Cleanup(func() { _ = c.Close() })
			o := c.Options()
			if o.Addr != tc.addr || o.Network != tc.network || o.DB != tc.db || o.Password != tc.password {
				t.Fatalf("options = %s %s db %d, want %s %s db %d", o.Network, o.Addr, o.DB, tc.network, tc.addr, tc.db)
			}
			if !o.ContextTimeoutEnabled {
				t.Fatal("client ignores context deadlines")
			}
			if _, err := redis.NewRateStore(c, &recordingStore{}); err != nil {
				t.Fatalf("a client from a URL was refused by the store: %v", err)
			}
		})
	}
}

func TestNewClientFromURLNeverEchoesTheURL(t *testing.T) {
	const secret = "hunter2-Sup3rSecret"
	bad := []string{
		"http://user:" + secret + "@cache.internal:6379",
		"redis://:" + secret + "@cache.internal:6379/not-a-db",
		"redis://:" + secret + "@cache.internal:6379/1/2",
		"redis://:" + secret + "@cache.internal:6379/?no_such_option=" + secret,
		"redis://:" + secret + "@cache.internal:6379/?dial_timeout=" + secret,
		"redis://:" + secret + "@[::1",
		"redis://:" + secret + "@host:port" + secret,
		"::" + secret,
		"unix://:" + secret + "@",
		secret,
		"",
	}
	for _, u := range bad {
		c, err := redis.NewClientFromURL(u)
		if err == nil {
			_ = c.Close()
			t.Errorf("NewClientFromURL accepted a bad URL (%d bytes)", len(u))
			continue
		}
		if !errors.Is(err, redis.ErrInvalidURL) {
			t.Errorf("error %v does not wrap ErrInvalidURL", err)
		}
		for _, leak := range []string{secret, "cache.internal", "not-a-db", "no_such_option"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("error %q quotes the URL (%q)", err, leak)
			}
		}
	}
}

func TestShareOf(t *testing.T) {
	cases := []struct {
		share redis.Share
		in    int
		want  int
	}{
		{redis.Share{Replicas: 1}, 30, 30},
		{redis.Share{Replicas: 2}, 30, 15},
		{redis.Share{Replicas: 3}, 30, 10},
		{redis.Share{Replicas: 4}, 30, 7},
		{redis.Share{Replicas: 0}, 30, 30},
		{redis.Share{Replicas: 50}, 30, 1},
		{redis.Share{Percent: 25, Replicas: 2}, 30, 7},
		{redis.Share{Percent: 100}, 30, 30},
		{redis.Share{Percent: 1}, 30, 1},
	}
	for _, c := range cases {
		if got := c.share.Of(c.in); got != c.want {
			t.Errorf("%+v.Of(%d) = %d, want %d", c.share, c.in, got, c.want)
		}
	}
}

// TestOutageEnforcesTheShare: with Redis unreachable a replica serves its
// share of the ceiling, not the whole, and says so once per outage.
func TestOutageEnforcesTheShare(t *testing.T) {
	client, _ := deadClient(t)
	var reports []redis.Share
	s := newStore(t, client, inproc.NewRateStore(newFakeClock()), redis.WithFallbackShare(50),
		redis.WithRetryInterval(time.Hour), redis.WithOutageReport(func(sh redis.Share) { reports = append(reports, sh) }))
	allowed := 0
	for range 30 {
		if d, err := s.Take(context.Background(), "alice", 20); err != nil {
			t.Fatal(err)
		} else if d.Allowed {
			allowed++
		} else if d.RetryAfter <= 0 {
			t.Fatal("a refusal without a retry time")
		}
	}
	if allowed != 10 {
		t.Fatalf("%d calls allowed during the outage, want the 50%% share of 20", allowed)
	}
	if len(reports) != 1 || reports[0].Percent != 50 {
		t.Fatalf("outage reported %v, want once with the share", reports)
	}
	// Another failure in the same outage is not a new report.
	_ = s.Health(context.Background())
	if len(reports) != 1 {
		t.Fatalf("outage reported %d times", len(reports))
	}
}
