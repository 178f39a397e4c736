package integration_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/arrowhead-go/arrowhead/adapters/inproc"
	"github.com/arrowhead-go/arrowhead/adapters/redis"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// refusals counts the audited refusals of kind.
func refusals(a *portstest.Audit, kind catalog.RefusalKind) int {
	n := 0
	for _, r := range a.Records() {
		if r.Status == ports.StatusRefused && r.Refusal == string(kind) {
			n++
		}
	}
	return n
}

// denyAll is the authorizer; the probe tools never consult it.
type denyAll struct{}

func (denyAll) Authorize(context.Context, ports.Principal, ports.Action, ports.Resource) ports.Decision {
	return ports.Decision{Reason: "integration test denies every resource"}
}

// localStore is the per-process store every Redis store is charged
// alongside, as in production.
func localStore() *inproc.RateStore { return inproc.NewRateStore(ports.SystemClock{}) }

// ---- the app under test ----

const (
	probeScope    = "core:probe"
	probeTool     = "rl_probe"
	otherTool     = "rl_probe_other"
	ceilingVar    = "ARROWHEAD_CALCULATE_PER_MINUTE"
	serverKeyGlob = redis.DefaultKeyPrefix + "*"
)

type probeOutput struct {
	OK bool `json:"ok" description:"always true"`
}

func probeSpec(name string) catalog.ToolSpec {
	return catalog.Define[struct{}, probeOutput](catalog.ToolDef{
		Name:        name,
		Family:      catalog.FamilyCore,
		Scope:       probeScope,
		Ceiling:     catalog.Ceiling{Var: ceilingVar, Default: 120},
		Description: "Answers ok; exists to exercise the rate limit. Example: {}",
	}).Bind(func(context.Context, catalog.Call, struct{}) (*catalog.Reply[probeOutput], error) {
		return catalog.Answer(probeOutput{OK: true}, "ok"), nil
	})
}

func testSettings(t *testing.T, perMinute int) *settings.Settings {
	t.Helper()
	env := map[string]string{
		"ARROWHEAD_PROFILE": "core",
		ceilingVar:          strconv.Itoa(perMinute),
	}
	s, err := settings.Load(func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	})
	if err != nil {
		t.Fatalf("loading settings: %v", err)
	}
	return s
}

// replica is one Arrowhead instance: its own app, Redis client, Redis store
// and per-process fallback.
type replica struct {
	app   *core.App
	store *redis.RateStore
	audit *portstest.Audit
}

func newReplica(t *testing.T, url string, perMinute int, opts ...redis.Option) replica {
	t.Helper()
	client, err := redis.NewClientFromURL(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	store, err := redis.NewRateStore(client, localStore(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	audit := &portstest.Audit{}
	app, err := core.New(core.Deps{
		Settings:   testSettings(t, perMinute),
		Authorizer: denyAll{},
		Rates:      store,
		Audit:      audit,
		Tracer:     nop.Tracer{},
		Metrics:    nop.Metrics{},
		Clock:      ports.SystemClock{},
		Families:   []core.Member{coretest.Tools(probeSpec(probeTool), probeSpec(otherTool))},
	})
	if err != nil {
		t.Fatalf("core.New: %v", err)
	}
	return replica{app: app, store: store, audit: audit}
}

func (r replica) call(t *testing.T, p ports.Principal, tool string) error {
	t.Helper()
	_, err := r.app.Call(context.Background(), p, tool, nil)
	return err
}

// wantOK fails unless err is nil.
func wantOK(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: refused: %v", what, err)
	}
}

// wantRateLimited fails unless err is a rate_limited ToolError with a
// positive RetryAfter.
func wantRateLimited(t *testing.T, err error, what string) *catalog.ToolError {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: allowed, want rate_limited", what)
	}
	te, ok := err.(*catalog.ToolError)
	if !ok {
		t.Fatalf("%s: error %T (%v), want *catalog.ToolError", what, err, err)
	}
	if te.Kind != catalog.KindRateLimited || te.RetryAfter <= 0 {
		t.Fatalf("%s: got kind %q RetryAfter %v, want rate_limited with RetryAfter > 0", what, te.Kind, te.RetryAfter)
	}
	return te
}

func redisClient(t testing.TB, url string) *goredis.Client {
	t.Helper()
	c, err := redis.NewClientFromURL(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// ---- (a) the script enforces the budget ----

func TestRedisScriptEnforcesBudget(t *testing.T) {
	url, _ := startRedis(t)
	client := redisClient(t, url)
	store, err := redis.NewRateStore(client, localStore())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const key, perMinute = "alice\x00tool\x00calculate", 5

	for i := 1; i <= perMinute; i++ {
		d, err := store.Take(ctx, key, perMinute)
		if err != nil || !d.Allowed {
			t.Fatalf("take %d of %d: %+v, %v; want allowed", i, perMinute, d, err)
		}
	}
	d, err := store.Take(ctx, key, perMinute)
	if err != nil || d.Allowed {
		t.Fatalf("take %d: %+v, %v; want refused", perMinute+1, d, err)
	}
	// One token of 5/min takes 12s; a little of it has already refilled.
	if d.RetryAfter <= 10*time.Second || d.RetryAfter > 12*time.Second {
		t.Fatalf("RetryAfter = %v, want just under 12s", d.RetryAfter)
	}
	if store.Degraded() {
		t.Fatal("the store fell back: Redis did not answer")
	}

	// The bucket is a hash with tokens and ts, expiring a little after it
	// would be full again (60s from empty, plus the margin).
	rk := store.RedisKey(key)
	fields, err := client.HGetAll(ctx, rk).Result()
	if err != nil || fields["tokens"] == "" || fields["ts"] == "" {
		t.Fatalf("bucket hash = %v, %v; want tokens and ts", fields, err)
	}
	ttl, err := client.PTTL(ctx, rk).Result()
	if err != nil || ttl <= 55*time.Second || ttl > 61*time.Second {
		t.Fatalf("PTTL = %v, %v; want about 61s", ttl, err)
	}

	// A different caller or component has its own bucket.
	for _, other := range []string{"bob\x00tool\x00calculate", "alice\x00tool\x00safe_fetch"} {
		if d, err := store.Take(ctx, other, perMinute); err != nil || !d.Allowed {
			t.Fatalf("%q shares alice's bucket: %+v, %v", other, d, err)
		}
	}
}

func TestRedisScriptRefillsByServerClock(t *testing.T) {
	url, _ := startRedis(t)
	client := redisClient(t, url)
	store, err := redis.NewRateStore(client, localStore())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	serverNow, err := client.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	micros := func(t time.Time) string { return strconv.FormatInt(t.UnixMicro(), 10) }

	tests := []struct {
		name      string
		ts        time.Time // when the bucket was last written, by the server's clock
		perMinute int
		want      int // tokens available now
	}{
		// Empty 30s ago at 10/min: five tokens back.
		{"half refilled", serverNow.Add(-30 * time.Second), 10, 5},
		// Empty an hour ago: full, never more than capacity.
		{"capped at capacity", serverNow.Add(-time.Hour), 10, 10},
		// Written "in the future" (the clock stepped back after a
		// failover): no refill, and no negative balance either.
		{"clock stepped back", serverNow.Add(time.Hour), 10, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := "refill\x00" + tc.name
			if err := client.HSet(ctx, store.RedisKey(key), "tokens", 0, "ts", micros(tc.ts)).Err(); err != nil {
				t.Fatal(err)
			}
			got := 0
			for ; got <= 2*tc.perMinute; got++ {
				d, err := store.Take(ctx, key, tc.perMinute)
				if err != nil {
					t.Fatal(err)
				}
				if !d.Allowed {
					if d.RetryAfter <= 0 || d.RetryAfter > time.Minute/time.Duration(tc.perMinute) {
						t.Fatalf("RetryAfter = %v, want within one refill interval", d.RetryAfter)
					}
					break
				}
			}
			if got != tc.want {
				t.Fatalf("%d tokens available, want %d", got, tc.want)
			}
		})
	}
}

func TestRedisKeysNeverCarryCallerStrings(t *testing.T) {
	url, _ := startRedis(t)
	client := redisClient(t, url)
	store, err := redis.NewRateStore(client, localStore())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	subjects := []string{"alice@example.com", "{slot}", "a b\r\nDEL *", strings.Repeat("z", 5000)}
	for _, s := range subjects {
		if _, err := store.Take(ctx, s+"\x00tool\x00calculate", 10); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := client.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(subjects) {
		t.Fatalf("Redis holds %d keys, want one per caller (%d)", len(keys), len(subjects))
	}
	shape := regexp.MustCompile(`^` + regexp.QuoteMeta(redis.DefaultKeyPrefix) + `[0-9a-f]{64}$`)
	for _, k := range keys {
		if !shape.MatchString(k) {
			t.Errorf("Redis key %q is not prefix + sha256 hex", k)
		}
	}
}

// ---- (b) two replicas share one budget ----

func TestTwoAppsShareOneRedisBudget(t *testing.T) {
	url, _ := startRedis(t)
	const ceiling = 4
	replicas := []replica{newReplica(t, url, ceiling), newReplica(t, url, ceiling)}
	alice := ports.NewPrincipal("alice", probeScope)
	bob := ports.NewPrincipal("bob", probeScope)

	// Alternate replicas: each alone would allow `ceiling` calls, together
	// they must allow `ceiling` in all.
	for i := 0; i < ceiling; i++ {
		wantOK(t, replicas[i%2].call(t, alice, probeTool), "alice call "+strconv.Itoa(i+1))
	}
	for i := ceiling; i < ceiling+4; i++ {
		te := wantRateLimited(t, replicas[i%2].call(t, alice, probeTool), "alice call "+strconv.Itoa(i+1))
		if te.RetryAfter > time.Minute/ceiling {
			t.Fatalf("RetryAfter %v exceeds one refill interval", te.RetryAfter)
		}
	}
	for _, r := range replicas {
		if r.store.Degraded() {
			t.Fatal("a replica fell back to its local store; the budget was not shared through Redis")
		}
		if refusals(r.audit, catalog.KindRateLimited) != 2 {
			t.Fatalf("replica audited %d rate_limited refusals, want 2", refusals(r.audit, catalog.KindRateLimited))
		}
	}

	// The budget is per caller and per component.
	wantOK(t, replicas[0].call(t, bob, probeTool), "bob on replica 0")
	wantOK(t, replicas[1].call(t, bob, probeTool), "bob on replica 1")
	wantOK(t, replicas[1].call(t, alice, otherTool), "alice on another tool")
}

// ---- (c) Redis dies and comes back ----

func TestRedisOutageFallsBackAndRecovers(t *testing.T) {
	srv := startRedisServer(t)
	const ceiling = 3
	r := newReplica(t, srv.URL(), ceiling)
	alice := ports.NewPrincipal("alice", probeScope)
	ctx := context.Background()

	wantOK(t, r.call(t, alice, probeTool), "call through Redis")
	if got := r.store.Health(ctx); got != ports.HealthOK {
		t.Fatalf("Health with Redis up = %q, want ok", got)
	}

	srv.Stop()

	// The per-process fallback takes over with what is left of alice's
	// budget (it was charged for the call through Redis): calls keep
	// working, still limited, and no fresh budget appears.
	for i := 1; i < ceiling; i++ {
		wantOK(t, r.call(t, alice, probeTool), "fallback call "+strconv.Itoa(i+1))
	}
	for i := 0; i < 5; i++ {
		wantRateLimited(t, r.call(t, alice, probeTool), "fallback call over the ceiling")
	}
	if !r.store.Degraded() {
		t.Fatal("store not degraded with Redis down")
	}
	if got := r.store.Health(ctx); got != ports.HealthDegraded {
		t.Fatalf("Health with Redis down = %q, want degraded", got)
	}

	srv.Restart()

	if got := r.store.Health(ctx); got != ports.HealthOK {
		t.Fatalf("Health after Redis restarted = %q, want ok", got)
	}
	if r.store.Degraded() {
		t.Fatal("store still degraded after Redis answered")
	}
	// The restarted Redis is empty, but alice's spent budget is not given
	// back: this replica still refuses her on the drained tool.
	wantRateLimited(t, r.call(t, alice, probeTool), "drained tool after recovery")
	// Checks go to Redis again: another tool's call creates its bucket.
	wantOK(t, r.call(t, alice, otherTool), "call after recovery")
	n, err := redisClient(t, srv.URL()).Keys(ctx, serverKeyGlob).Result()
	if err != nil || len(n) != 1 {
		t.Fatalf("Redis holds %v (%v) after recovery, want alice's bucket", n, err)
	}
}

// hammer calls tool as p from several goroutines until the returned finish
// is called, which reports how many calls were allowed and for how long
// the load ran.
func hammer(r replica, p ports.Principal, tool string) (finish func() (allowed int64, elapsed time.Duration)) {
	var allowed atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	start := time.Now()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := r.app.Call(context.Background(), p, tool, nil); err == nil {
					allowed.Add(1)
				}
			}
		}()
	}
	return func() (int64, time.Duration) {
		close(stop)
		wg.Wait()
		return allowed.Load(), time.Since(start)
	}
}

// wantOneBudget fails unless allowed is at least one burst and at most what
// one caller may get in elapsed at perMinute: the burst plus the refill,
// with a second's refill of slack.
func wantOneBudget(t *testing.T, perMinute int, allowed int64, elapsed time.Duration, what string) {
	t.Helper()
	limit := int64(perMinute) + int64(float64(perMinute)*elapsed.Minutes()) + int64(perMinute/60)
	if allowed > limit || allowed < int64(perMinute) {
		t.Fatalf("alice got %d calls in %v %s; one budget allows %d", allowed, elapsed.Round(time.Millisecond), what, limit)
	}
	t.Logf("%d calls allowed in %v %s (one budget: %d)", allowed, elapsed.Round(time.Millisecond), what, limit)
}

// TestRedisOutageNeverMultipliesTheBudget: at 600/min, Redis is killed
// mid-load; the caller still gets one budget (the burst plus the refill),
// not a second burst from a fresh per-process bucket.
func TestRedisOutageNeverMultipliesTheBudget(t *testing.T) {
	srv := startRedisServer(t)
	const ceiling = 600
	r := newReplica(t, srv.URL(), ceiling, redis.WithRetryInterval(100*time.Millisecond))
	alice := ports.NewPrincipal("alice", probeScope)

	finish := hammer(r, alice, probeTool)
	time.Sleep(time.Second)
	srv.Stop()
	time.Sleep(2 * time.Second)
	allowed, elapsed := finish()

	if !r.store.Degraded() {
		t.Fatal("store not degraded with Redis down")
	}
	if got := r.store.Health(context.Background()); got != ports.HealthDegraded {
		t.Fatalf("Health = %q with Redis down, want degraded", got)
	}
	wantOneBudget(t, ceiling, allowed, elapsed, "across a Redis outage")
}

// TestFlappingRedisNeverMultipliesTheBudget: Redis goes down and comes
// back empty again and again under load; every restart offers a fresh
// shared bucket and every outage the per-process one, and neither may add
// to the caller's one budget.
func TestFlappingRedisNeverMultipliesTheBudget(t *testing.T) {
	srv := startRedisServer(t)
	const ceiling = 600
	r := newReplica(t, srv.URL(), ceiling, redis.WithRetryInterval(50*time.Millisecond))
	alice := ports.NewPrincipal("alice", probeScope)

	finish := hammer(r, alice, probeTool)
	start := time.Now()
	flaps := 0
	for time.Since(start) < 4*time.Second {
		time.Sleep(300 * time.Millisecond)
		srv.Stop()
		time.Sleep(300 * time.Millisecond)
		srv.Restart()
		flaps++
	}
	time.Sleep(300 * time.Millisecond)
	allowed, elapsed := finish()

	wantOneBudget(t, ceiling, allowed, elapsed, "across "+strconv.Itoa(flaps)+" Redis restarts")
	// Redis is back and answering: the store is healthy again.
	if got := r.store.Health(context.Background()); got != ports.HealthOK {
		t.Fatalf("Health after the last restart = %q, want ok", got)
	}
}

func TestHungRedisTimesOutToFallback(t *testing.T) {
	srv := startRedisServer(t)
	// A long socket timeout: only the store's own per-call timeout can keep
	// a check short.
	url := srv.URL() + "?read_timeout=30s&write_timeout=30s"
	const callTimeout = 100 * time.Millisecond
	r := newReplica(t, url, 3, redis.WithCallTimeout(callTimeout))
	alice := ports.NewPrincipal("alice", probeScope)
	ctx := context.Background()

	wantOK(t, r.call(t, alice, probeTool), "call through Redis")
	srv.Pause()
	t.Cleanup(srv.Stop) // kills the paused process even if a check below fails

	start := time.Now()
	wantOK(t, r.call(t, alice, probeTool), "call with Redis hung")
	// Generous bound: the point is that it is nowhere near the 30s socket
	// timeout.
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Fatalf("a check against a hung Redis took %v", elapsed)
	}
	if !r.store.Degraded() {
		t.Fatal("store not degraded with Redis hung")
	}
	if got := r.store.Health(ctx); got != ports.HealthDegraded {
		t.Fatalf("Health with Redis hung = %q, want degraded", got)
	}

	srv.Resume()
	if got := r.store.Health(ctx); got != ports.HealthOK {
		t.Fatalf("Health after Redis resumed = %q, want ok", got)
	}
}

// runPresence runs r's heartbeat until the test ends.
func runPresence(t *testing.T, r replica) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.store.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestOutageSplitsTheBudgetAcrossReplicas: two replicas share a 30 per
// minute ceiling through Redis; Redis is killed and a new caller hammers
// both. Each enforces its half (the replicas it last saw alive), so the
// caller gets one budget, not two; the outage is reported once per
// replica with that share, and health says degraded until Redis returns.
func TestOutageSplitsTheBudgetAcrossReplicas(t *testing.T) {
	srv := startRedisServer(t)
	const ceiling = 30
	var mu sync.Mutex
	reports := map[int][]redis.Share{}
	var rs []replica
	for i := range 2 {
		r := newReplica(t, srv.URL(), ceiling, redis.WithHeartbeat(50*time.Millisecond), redis.WithRetryInterval(50*time.Millisecond),
			redis.WithOutageReport(func(sh redis.Share) { mu.Lock(); reports[i] = append(reports[i], sh); mu.Unlock() }))
		runPresence(t, r)
		rs = append(rs, r)
	}
	deadline := time.Now().Add(5 * time.Second)
	for rs[0].store.Share().Replicas != 2 || rs[1].store.Share().Replicas != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("replicas saw %d and %d alive, want 2", rs[0].store.Share().Replicas, rs[1].store.Share().Replicas)
		}
		time.Sleep(10 * time.Millisecond)
	}

	srv.Stop()
	carol := ports.NewPrincipal("carol", probeScope)
	finish0, finish1 := hammer(rs[0], carol, probeTool), hammer(rs[1], carol, probeTool)
	time.Sleep(1500 * time.Millisecond)
	a0, elapsed := finish0()
	a1, _ := finish1()
	// Each half refills at 15 a minute: a second and a half adds under one.
	if a0+a1 > ceiling+1 || a0 < ceiling/2 || a1 < ceiling/2 {
		t.Fatalf("carol got %d + %d calls in %v with Redis down; the two shares allow %d", a0, a1, elapsed.Round(time.Millisecond), ceiling)
	}
	t.Logf("carol got %d + %d calls in %v with Redis down (ceiling %d)", a0, a1, elapsed.Round(time.Millisecond), ceiling)
	for i, r := range rs {
		if got := r.store.Health(context.Background()); got != ports.HealthDegraded {
			t.Fatalf("replica %d health %q with Redis down, want degraded", i, got)
		}
		mu.Lock()
		got := append([]redis.Share(nil), reports[i]...)
		mu.Unlock()
		if len(got) != 1 || got[0].Replicas != 2 {
			t.Fatalf("replica %d reported the outage as %v, want once with 2 replicas", i, got)
		}
	}

	srv.Restart()
	// Each replica is back on Redis by itself within a few heartbeats (a
	// first ping may still meet a connection the restart closed).
	back := time.Now()
	for i, r := range rs {
		for r.store.Health(context.Background()) != ports.HealthOK || r.store.Degraded() {
			if time.Since(back) > 5*time.Second {
				t.Fatalf("replica %d still degraded 5 s after Redis returned", i)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// ---- cost of one check through Redis (loopback) ----

// BenchmarkRedisTake reports, beside the time, the Redis commands one
// check sends (commands/op): one script run while Redis is up, whatever
// the outage share costs in memory.
func BenchmarkRedisTake(b *testing.B) {
	url, _ := startRedis(b)
	client := redisClient(b, url)
	counter := &commandCount{}
	client.AddHook(counter)
	store, err := redis.NewRateStore(client, localStore())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := store.Take(ctx, "alice\x00tool\x00calculate", redis.MaxPerMinute); err != nil {
			b.Fatal(err)
		}
	}
	if store.Degraded() {
		b.Fatal("the benchmark ran on the fallback")
	}
	b.ReportMetric(float64(counter.n.Load())/float64(b.N), "commands/op")
}

// commandCount is a go-redis hook counting the commands a client sends
// (the first EVALSHA's NOSCRIPT retry as EVAL included).
type commandCount struct{ n atomic.Int64 }

func (c *commandCount) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (c *commandCount) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *commandCount) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

func BenchmarkRedisTakeParallel(b *testing.B) {
	url, _ := startRedis(b)
	store, err := redis.NewRateStore(redisClient(b, url), localStore())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := store.Take(ctx, "alice\x00tool\x00calculate", redis.MaxPerMinute); err != nil {
				b.Error(err)
				return
			}
		}
	})
	if store.Degraded() {
		b.Fatal("the benchmark ran on the fallback")
	}
}
