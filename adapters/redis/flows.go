package redis

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Flow-mark bounds in Redis.
const (
	// MaxFlowMarksPerCaller bounds the marks one caller's set keeps; the
	// marks closest to expiry go first (the in-memory store keeps the same
	// bound).
	MaxFlowMarksPerCaller = 32_768
	// flowKeyInfix follows the prefix in a caller's flow-mark key.
	flowKeyInfix = "flow:"
)

// ErrInvalidTTL is returned by Remember for a ttl shorter than a
// millisecond.
var ErrInvalidTTL = errors.New("flow marks need a time to live of at least a millisecond")

// rememberScript records ARGV[5..] (8-byte members) in the sorted set
// KEYS[1], scored by their expiry in server milliseconds (now + ARGV[1]),
// drops expired members (ZADDs go in batches of 500 members, within Lua's
// unpack limit), trims the set to ARGV[2] members (soonest expiry
// first) and keeps the key alive as long as its newest member. It then
// numbers the write (INCR of the version counter KEYS[2]) and publishes it
// on the channel ARGV[4] as "version expiry caller-id\n" followed by the
// members (ARGV[3] is the caller's id, the hex tail of KEYS[1]), so every
// replica's copy (flowsync.go) learns it in order. It returns the version.
var rememberScript = goredis.NewScript(`
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local expiry = now + ttl
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local batch = {}
for i = 5, #ARGV do
  batch[#batch + 1] = expiry
  batch[#batch + 1] = ARGV[i]
  if #batch >= 1000 then
    redis.call('ZADD', KEYS[1], unpack(batch))
    batch = {}
  end
end
if #batch > 0 then
  redis.call('ZADD', KEYS[1], unpack(batch))
end
local n = redis.call('ZCARD', KEYS[1])
if n > cap then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - cap - 1)
end
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
local v = redis.call('INCR', KEYS[2])
redis.call('PUBLISH', ARGV[4], string.format('%d %d %s\n', v, expiry, ARGV[3]) .. table.concat(ARGV, '', 5))
return v
`)

// recallScript counts the members ARGV[...] of KEYS[1] whose expiry has not
// passed on the server's clock.
var recallScript = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = 0
for i = 1, #ARGV do
  local s = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if s and tonumber(s) > now then
    n = n + 1
  end
end
return n
`)

var _ ports.FlowStore = (*RateStore)(nil)

// Remember records marks for caller in Redis, shared by every replica, and
// in the per-process fallback when it keeps flow marks too (so this
// replica's own marks hold through an outage). While Redis is unavailable
// only the fallback records them; the error is returned only when neither
// could.
func (s *RateStore) Remember(ctx context.Context, caller string, marks []uint64, ttl time.Duration) error {
	if ttl < time.Millisecond {
		return ErrInvalidTTL
	}
	if len(marks) == 0 {
		return nil
	}
	var localErr error = errNoLocalFlows
	if local, ok := s.fallback.(ports.FlowStore); ok {
		localErr = local.Remember(ctx, caller, marks, ttl)
	}
	if !s.shouldTryRedis() {
		return localErr
	}
	id := flowID(caller)
	args := make([]any, 0, len(marks)+4)
	args = append(args, ttl.Milliseconds(), MaxFlowMarksPerCaller, id, s.flowChannel())
	for _, m := range marks {
		args = append(args, member(m))
	}
	rctx, cancel := context.WithTimeout(ctx, s.cfg.callTimeout)
	defer cancel()
	v, err := rememberScript.Run(rctx, s.client, []string{s.cfg.prefix + flowKeyInfix + id, s.flowVersionKey()}, args...).Int64()
	if err != nil {
		if ctx.Err() == nil {
			s.markDegraded()
		}
		return localErr
	}
	s.degraded.Store(false)
	if localErr == nil && v > 0 {
		// This replica's own marks are in its fallback, which Recall asks
		// first: a check need not wait for their announcement.
		s.flows.own(uint64(v))
	}
	return nil
}

// Recall counts marks recorded for caller: this replica's own first (no
// round trip when one of them is there), then this replica's copy of every
// replica's marks when it can prove the copy fresh for the call in ctx (see
// flowsync.go: no round trip of its own), else Redis, where every
// replica's are. While Redis is unavailable the answer is this replica's
// own marks; an error is returned only when neither could answer.
func (s *RateStore) Recall(ctx context.Context, caller string, marks []uint64) (int, error) {
	if len(marks) == 0 {
		return 0, nil
	}
	localN, localErr := 0, errNoLocalFlows
	if local, ok := s.fallback.(ports.FlowStore); ok {
		localN, localErr = local.Recall(ctx, caller, marks)
		if localErr == nil && localN > 0 {
			return localN, nil
		}
	}
	if !s.shouldTryRedis() {
		return localN, localErr
	}
	if n, ok, err := s.recallCopy(ctx, caller, marks); err != nil {
		if ctx.Err() == nil {
			s.markDegraded()
		}
		return localN, localErr
	} else if ok {
		return n, nil
	}
	args := make([]any, 0, len(marks))
	for _, m := range marks {
		args = append(args, member(m))
	}
	rctx, cancel := context.WithTimeout(ctx, s.cfg.callTimeout)
	defer cancel()
	n, err := recallScript.Run(rctx, s.client, []string{s.FlowKey(caller)}, args...).Int()
	if err != nil {
		if ctx.Err() == nil {
			s.markDegraded()
		}
		return localN, localErr
	}
	s.degraded.Store(false)
	return n, nil
}

// errNoLocalFlows stands for the answer of a fallback that keeps no flow
// marks: with Redis unavailable too, nothing could answer.
var errNoLocalFlows = errors.New("redis is unavailable and the fallback keeps no flow marks")

// FlowKey returns the Redis key of caller's flow marks, for operators.
func (s *RateStore) FlowKey(caller string) string {
	return s.cfg.prefix + flowKeyInfix + flowID(caller)
}

// flowID is caller's id in flow keys and announcements: the hex SHA-256 of
// the caller key, which is never used verbatim.
func flowID(caller string) string {
	sum := sha256.Sum256([]byte(caller))
	return hex.EncodeToString(sum[:])
}

// member is a mark as a sorted-set member: its 8 big-endian bytes.
func member(m uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], m)
	return string(b[:])
}
