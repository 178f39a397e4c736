package redis

import (
	"context"
	"errors"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/arrowhead-go/arrowhead/ports"
)

// A replica's copy of every replica's flow marks, so the exfiltration
// guard's check of a benign call costs no round trip of its own.
//
// Every Remember (rememberScript) numbers its write with a version counter
// in Redis and publishes the marks with that version on a channel. Run
// subscribes; on each (re)subscription this replica drops its copy and
// reads the current version, then applies every announcement in version
// order. A caller's marks are copied on the first check that needs them
// (one read of that caller's set, with the version it reflects: the
// bounded catch-up), and kept current from the announcements after it.
//
// Ordering. Replica A records marks before the result leaves it, so a
// client that sends that content to this replica does so after A's write
// reached Redis. The copy alone cannot know whether the announcement has
// arrived yet (pub/sub delivery may lag behind the client), so a check
// answers from the copy only when it holds a flow version read from Redis
// by a command sent after the call arrived (ports.FlowCut) and the copy
// has applied every announcement up to that version. The rate-limit
// check of the same call reads the version in its script (takeScript), so
// with the rate limit on (the default) the proof costs nothing; with it off
// the check reads the version alone (a GET, cheaper than a recall). If the
// copy is behind, the check waits for the announcements (at most
// flowSyncWait); if they do not come, or the copy is down (no
// subscription, Redis degraded, no arrival instant), it asks Redis as
// before. This replica's own writes need no waiting: their marks are in
// its fallback store, which Recall asks first. A gap in the versions (a lost announcement) drops the copy and
// resubscribes.

// Flow-copy bounds and names.
const (
	// flowVersionInfix and flowChannelInfix follow the prefix in the
	// version counter's key and the announcement channel's name.
	flowVersionInfix = "flowver"
	flowChannelInfix = "flowlog"
	// flowSyncWait bounds how long a check waits for announcements the
	// copy has not applied yet before asking Redis instead.
	flowSyncWait = 50 * time.Millisecond
	// flowRingSize is how many recent announcements (version and caller)
	// are remembered, so a caller's set read while announcements for it
	// were being applied is not installed incomplete.
	flowRingSize = 4096
	// maxCopiedFlowCallers and maxCopiedFlowMarks bound the copy; beyond
	// them callers are dropped (and read again when next checked).
	maxCopiedFlowCallers = 4096
	maxCopiedFlowMarks   = 1 << 21
	// maxPendingOwn bounds the own writes a check may skip waiting for.
	maxPendingOwn = 1024
	// flowResync is how long the subscription may stay silent before it
	// is pinged (a dead connection then errors and is replaced).
	flowResync = 15 * time.Second
	// flowRetry is the pause before a failed subscription is tried again.
	flowRetry = 250 * time.Millisecond
)

// monoBase anchors monoNow: instants as nanoseconds since it, read from the
// monotonic clock, so they compare with a ports.FlowCut.
var monoBase = time.Now()

func monoNow() int64 { return int64(time.Since(monoBase)) }

// flowSync is the copy and what proves it fresh. The zero value is not
// ready: init it.
type flowSync struct {
	// obsVersion is the highest flow version any reply carried, and
	// obsSent the latest instant (monoNow) a command whose reply carried
	// one was sent. Written version first, read instant first, so an
	// instant read is never newer than the version read after it.
	obsVersion atomic.Uint64
	obsSent    atomic.Int64

	mu sync.Mutex
	// live is true while the subscription is up and every announcement
	// since the copy was dropped has been applied in order.
	live bool
	// applied is the version of the last announcement applied (or the
	// version read when the copy was dropped).
	applied uint64
	// advanced is closed and replaced whenever applied moves or live
	// changes.
	advanced chan struct{}
	callers  map[string]*copiedFlows
	// marks counts the marks in callers.
	marks int
	// offsetMS is the Redis server's clock minus this replica's, in ms,
	// as of the latest read of a caller's set.
	offsetMS int64
	ring     []ringEntry
	// pending holds versions above applied that this replica wrote itself
	// (their marks are in its fallback, asked before the copy), so a check
	// need not wait for their announcements.
	pending map[uint64]struct{}
}

type ringEntry struct {
	version uint64
	id      string
}

// copiedFlows is one caller's marks with their expiry (server ms).
type copiedFlows struct{ expiry map[uint64]int64 }

func (f *flowSync) init() {
	f.obsSent.Store(math.MinInt64)
	f.advanced = make(chan struct{})
	f.callers = map[string]*copiedFlows{}
	f.pending = map[uint64]struct{}{}
}

// own records that version is a write of this replica's.
func (f *flowSync) own(version uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.live && version > f.applied && len(f.pending) < maxPendingOwn {
		f.pending[version] = struct{}{}
	}
}

// caughtUp reports whether every announcement up to target is applied, or
// is one of this replica's own writes. The caller holds f.mu.
func (f *flowSync) caughtUp(target uint64) bool {
	if f.applied >= target {
		return true
	}
	if target-f.applied > maxPendingOwn {
		return false
	}
	for v := f.applied + 1; v <= target; v++ {
		if _, ok := f.pending[v]; !ok {
			return false
		}
	}
	return true
}

// observe records that a command sent at sent (monoNow) read version.
func (f *flowSync) observe(version uint64, sent int64) {
	for {
		old := f.obsVersion.Load()
		if version <= old || f.obsVersion.CompareAndSwap(old, version) {
			break
		}
	}
	for {
		old := f.obsSent.Load()
		if sent <= old || f.obsSent.CompareAndSwap(old, sent) {
			break
		}
	}
}

// signal wakes the checks waiting on the copy. The caller holds f.mu.
func (f *flowSync) signal() {
	close(f.advanced)
	f.advanced = make(chan struct{})
}

// reset drops the copy and starts it again at version (read after the
// subscription was confirmed, by a command sent at sent).
func (f *flowSync) reset(version uint64, sent int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.callers)
	f.marks = 0
	f.applied = version
	if f.ring == nil {
		f.ring = make([]ringEntry, flowRingSize)
	}
	clear(f.ring)
	clear(f.pending)
	f.live = true
	f.signal()
	if version < f.obsVersion.Load() {
		// The counter went back: Redis restarted empty (its marks went
		// with it). Versions seen before mean nothing now.
		f.obsVersion.Store(version)
	}
	f.observe(version, sent)
}

// stop marks the copy unusable until the next reset.
func (f *flowSync) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live = false
	clear(f.callers)
	clear(f.pending)
	f.marks = 0
	f.signal()
}

// errBadAnnouncement stands for an announcement that does not parse.
var errBadAnnouncement = errors.New("malformed flow-mark announcement")

// apply applies one announcement. It returns false on a gap in the
// versions, or an announcement it cannot read: the copy can no longer
// vouch for what it missed, so the subscription starts over.
func (f *flowSync) apply(payload string) bool {
	version, expiry, id, marks, err := parseAnnouncement(payload)
	if err != nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.live {
		return true // not yet reset: the reset reads past this
	}
	switch {
	case version > f.applied+1:
		return false
	case version == f.applied+1:
		f.applied = version
		delete(f.pending, version)
		f.ring[version%flowRingSize] = ringEntry{version: version, id: id}
		f.signal()
	}
	// An announcement at or below applied was already reflected; adding
	// it again changes nothing.
	c := f.callers[id]
	if c == nil {
		return true
	}
	for i := 0; i+8 <= len(marks); i += 8 {
		m := beUint64(marks[i : i+8])
		if old, ok := c.expiry[m]; !ok {
			c.expiry[m] = expiry
			f.marks++
		} else if old < expiry {
			c.expiry[m] = expiry
		}
	}
	f.bound(id, c)
	return true
}

// bound keeps the copy within its limits after c (of id) grew: expired
// marks go first; a caller still over its limit is dropped (read again
// when next checked), and so are other callers while the copy is over.
// The caller holds f.mu.
func (f *flowSync) bound(id string, c *copiedFlows) {
	if len(c.expiry) > MaxFlowMarksPerCaller {
		now := time.Now().UnixMilli() + f.offsetMS
		for m, e := range c.expiry {
			if e <= now {
				delete(c.expiry, m)
				f.marks--
			}
		}
		if len(c.expiry) > MaxFlowMarksPerCaller {
			f.drop(id)
		}
	}
	for k := range f.callers {
		if f.marks <= maxCopiedFlowMarks && len(f.callers) <= maxCopiedFlowCallers {
			break
		}
		f.drop(k)
	}
}

// drop forgets one caller. The caller holds f.mu.
func (f *flowSync) drop(id string) {
	if c := f.callers[id]; c != nil {
		f.marks -= len(c.expiry)
		delete(f.callers, id)
	}
}

// parseAnnouncement reads "version expiry id\n" followed by 8-byte marks.
func parseAnnouncement(p string) (version uint64, expiry int64, id, marks string, err error) {
	header, marks, ok := strings.Cut(p, "\n")
	fields := strings.Fields(header)
	if !ok || len(fields) != 3 || len(fields[2]) != 64 || len(marks)%8 != 0 {
		return 0, 0, "", "", errBadAnnouncement
	}
	if version, err = strconv.ParseUint(fields[0], 10, 64); err != nil {
		return 0, 0, "", "", errBadAnnouncement
	}
	if expiry, err = strconv.ParseInt(fields[1], 10, 64); err != nil {
		return 0, 0, "", "", errBadAnnouncement
	}
	return version, expiry, fields[2], marks, nil
}

func beUint64(s string) uint64 {
	_ = s[7]
	return uint64(s[0])<<56 | uint64(s[1])<<48 | uint64(s[2])<<40 | uint64(s[3])<<32 |
		uint64(s[4])<<24 | uint64(s[5])<<16 | uint64(s[6])<<8 | uint64(s[7])
}

// copyAnswer is what the copy can say about one check.
type copyAnswer int

const (
	copyUnusable copyAnswer = iota // ask Redis
	copyMissing                    // fresh, but the caller is not copied: read the caller's set
	copyAnswered
)

// lookup counts marks of id in the copy once it has applied every
// announcement up to target, waiting at most flowSyncWait for them.
func (f *flowSync) lookup(ctx context.Context, target uint64, id string, marks []uint64) (int, copyAnswer) {
	var timer *time.Timer
	for {
		f.mu.Lock()
		if !f.live {
			f.mu.Unlock()
			return 0, copyUnusable
		}
		if f.caughtUp(target) {
			defer f.mu.Unlock()
			c := f.callers[id]
			if c == nil {
				return 0, copyMissing
			}
			return c.count(marks, time.Now().UnixMilli()+f.offsetMS), copyAnswered
		}
		wait := f.advanced
		f.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(flowSyncWait)
			defer timer.Stop()
		}
		select {
		case <-wait:
		case <-timer.C:
			return 0, copyUnusable
		case <-ctx.Done():
			return 0, copyUnusable
		}
	}
}

func (c *copiedFlows) count(marks []uint64, nowMS int64) int {
	n := 0
	for _, m := range marks {
		if e, ok := c.expiry[m]; ok && e > nowMS {
			n++
		}
	}
	return n
}

// install adds id's set as read at version (server clock nowMS, reply
// received at localMS), unless announcements for id newer than version
// were applied before it and may be missing from it.
func (f *flowSync) install(id string, version uint64, nowMS, localMS int64, set map[uint64]int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.live {
		return
	}
	if f.applied > version {
		if f.applied-version > flowRingSize {
			return
		}
		for v := version + 1; v <= f.applied; v++ {
			if e := f.ring[v%flowRingSize]; e.version != v || e.id == id {
				return
			}
		}
	}
	f.offsetMS = nowMS - localMS
	f.drop(id)
	f.callers[id] = &copiedFlows{expiry: set}
	f.marks += len(set)
	f.bound(id, f.callers[id])
}

// loadFlowsScript reads KEYS[1]'s live members with their expiry, the
// version counter KEYS[2] they reflect, and the server's clock (ms).
var loadFlowsScript = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = tonumber(redis.call('GET', KEYS[2]) or '0')
return {v, now, redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')}
`)

// recallCopy answers Recall from the copy when it can prove it fresh for
// the call in ctx; ok is false when it cannot (the caller asks Redis). A
// caller not yet copied is read once (that read is itself fresh) and kept.
func (s *RateStore) recallCopy(ctx context.Context, caller string, marks []uint64) (n int, ok bool, err error) {
	cut, has := ports.FlowCut(ctx)
	if !has || !s.FlowCopyLive() {
		return 0, false, nil
	}
	if s.flows.obsSent.Load() < int64(cut.Sub(monoBase)) {
		// No rate check read the version for this call (its limit is off):
		// read it alone, still cheaper than recalling from Redis.
		if err := s.readFlowVersion(ctx); err != nil {
			return 0, false, err
		}
	}
	target := s.flows.obsVersion.Load()
	id := flowID(caller)
	n, ans := s.flows.lookup(ctx, target, id, marks)
	switch ans {
	case copyAnswered:
		return n, true, nil
	case copyUnusable:
		return 0, false, nil
	}
	rctx, cancel := context.WithTimeout(ctx, s.cfg.callTimeout)
	defer cancel()
	sent := monoNow()
	res, err := loadFlowsScript.Run(rctx, s.client, []string{s.cfg.prefix + flowKeyInfix + id, s.flowVersionKey()}).Slice()
	if err != nil {
		return 0, false, err
	}
	version, nowMS, set, err := parseLoaded(res)
	if err != nil {
		return 0, false, err
	}
	s.flows.observe(version, sent)
	for _, m := range marks {
		if _, ok := set[m]; ok {
			n++
		}
	}
	s.flows.install(id, version, nowMS, time.Now().UnixMilli(), set)
	return n, true, nil
}

// readFlowVersion reads the flow version counter as an observation.
func (s *RateStore) readFlowVersion(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, s.cfg.callTimeout)
	defer cancel()
	sent := monoNow()
	v, err := s.client.Get(rctx, s.flowVersionKey()).Uint64()
	if errors.Is(err, goredis.Nil) {
		v, err = 0, nil
	}
	if err != nil {
		return err
	}
	s.flows.observe(v, sent)
	return nil
}

// parseLoaded reads loadFlowsScript's reply.
func parseLoaded(res []any) (version uint64, nowMS int64, set map[uint64]int64, err error) {
	if len(res) != 3 {
		return 0, 0, nil, errUnexpectedReply
	}
	v, ok1 := res[0].(int64)
	now, ok2 := res[1].(int64)
	pairs, ok3 := res[2].([]any)
	if !ok1 || !ok2 || !ok3 || v < 0 || len(pairs)%2 != 0 {
		return 0, 0, nil, errUnexpectedReply
	}
	set = make(map[uint64]int64, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		m, ok := pairs[i].(string)
		score, ok2 := pairs[i+1].(string)
		if !ok || !ok2 || len(m) != 8 {
			return 0, 0, nil, errUnexpectedReply
		}
		e, err := strconv.ParseFloat(score, 64)
		if err != nil {
			return 0, 0, nil, errUnexpectedReply
		}
		set[beUint64(m)] = int64(e)
	}
	return uint64(v), now, set, nil
}

// observeFlowVersion records a flow version a rate-limit check read.
func (s *RateStore) observeFlowVersion(version uint64, sent int64) { s.flows.observe(version, sent) }

func (s *RateStore) flowVersionKey() string { return s.cfg.prefix + flowVersionInfix }

func (s *RateStore) flowChannel() string { return s.cfg.prefix + flowChannelInfix }

// FlowCopyLive reports whether this replica's copy of the flow marks is
// subscribed and in order, so Recall may answer from it (when it can also
// prove it fresh for the call). For operators and tests.
func (s *RateStore) FlowCopyLive() bool {
	s.flows.mu.Lock()
	defer s.flows.mu.Unlock()
	return s.flows.live
}

// watchFlows keeps the copy until ctx ends: it subscribes to the
// announcements, starts the copy afresh on every (re)subscription and
// applies what arrives; a lost connection or a gap starts over.
func (s *RateStore) watchFlows(ctx context.Context) {
	for ctx.Err() == nil {
		s.watchFlowsOnce(ctx)
		s.flows.stop()
		select {
		case <-ctx.Done():
		case <-time.After(flowRetry):
		}
	}
}

func (s *RateStore) watchFlowsOnce(ctx context.Context) {
	ps := s.client.Subscribe(ctx, s.flowChannel())
	defer ps.Close()
	// A receive waits on the socket, not on ctx: closing the subscription
	// is what ends it when ctx does.
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer stop()
	for ctx.Err() == nil {
		msg, err := ps.ReceiveTimeout(ctx, flowResync)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				_ = ps.Ping(ctx)
				continue
			}
			return
		}
		switch m := msg.(type) {
		case *goredis.Subscription:
			if m.Kind != "subscribe" {
				continue
			}
			// Every write from now on is announced to this subscription;
			// the version read after it is where the copy starts.
			sent := monoNow()
			gctx, cancel := context.WithTimeout(ctx, s.cfg.callTimeout)
			v, err := s.client.Get(gctx, s.flowVersionKey()).Uint64()
			cancel()
			if errors.Is(err, goredis.Nil) {
				v, err = 0, nil
			}
			if err != nil {
				return
			}
			s.flows.reset(v, sent)
		case *goredis.Message:
			if !s.flows.apply(m.Payload) {
				return
			}
		}
	}
}
