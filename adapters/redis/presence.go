package redis

import (
	"context"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Presence defaults.
const (
	// DefaultHeartbeat is how often Run records this replica as alive.
	DefaultHeartbeat = 5 * time.Second
	// aliveHeartbeats is how many heartbeats a replica may miss before the
	// others stop counting it.
	aliveHeartbeats = 3
	// presenceKey (after the prefix) is the sorted set of replicas, scored
	// by their last heartbeat in server milliseconds.
	presenceKey = "replicas"
)

// heartbeatScript records ARGV[1] as alive now (the server's clock), drops
// members silent for longer than ARGV[2] ms and returns how many remain.
var heartbeatScript = goredis.NewScript(`
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('PEXPIRE', KEYS[1], window)
return redis.call('ZCARD', KEYS[1])
`)

// Share is the part of every ceiling a replica enforces on its own while
// Redis is unreachable.
type Share struct {
	// Percent is the fixed share (WithFallbackShare); 0 when derived.
	Percent int
	// Replicas is how many replicas the last heartbeat saw alive, this one
	// included; the derived share is 1/Replicas.
	Replicas int
}

// Of is this replica's ceiling for perMinute: rounded down, and never
// below one call a minute (a ceiling smaller than the replica count cannot
// be split further without refusing everyone).
func (sh Share) Of(perMinute int) int {
	if sh.Percent > 0 {
		return max(perMinute*sh.Percent/100, 1)
	}
	return max(perMinute/max(sh.Replicas, 1), 1)
}

// Share returns the share this replica enforces during an outage.
func (s *RateStore) Share() Share {
	if s.cfg.sharePercent > 0 {
		return Share{Percent: s.cfg.sharePercent, Replicas: int(s.alive.Load())}
	}
	return Share{Replicas: int(s.alive.Load())}
}

// Run keeps this replica's presence in Redis until ctx ends, heartbeating
// at once and then every heartbeat period; the replicas it sees alive set
// the outage share. It also keeps this replica's copy of every replica's
// flow marks (flowsync.go), without which Recall asks Redis on every
// check. It runs off the call path (calls never wait for it).
// A failed heartbeat degrades the store like a failed check; a successful
// one ends the degraded state. On return it removes this replica from the
// set, so a replica that stopped cleanly is not counted.
func (s *RateStore) Run(ctx context.Context) {
	flowsDone := make(chan struct{})
	go func() { defer close(flowsDone); s.watchFlows(ctx) }()
	defer func() { <-flowsDone }()
	tick := time.NewTicker(s.cfg.heartbeat)
	defer tick.Stop()
	for {
		s.heartbeat(ctx)
		select {
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.callTimeout)
			_ = s.client.ZRem(rctx, s.cfg.prefix+presenceKey, s.replicaID).Err()
			cancel()
			return
		case <-tick.C:
		}
	}
}

func (s *RateStore) heartbeat(ctx context.Context) {
	hctx, cancel := context.WithTimeout(ctx, s.cfg.callTimeout)
	defer cancel()
	window := (aliveHeartbeats * s.cfg.heartbeat).Milliseconds()
	n, err := heartbeatScript.Run(hctx, s.client, []string{s.cfg.prefix + presenceKey}, s.replicaID, window).Int64()
	if err != nil {
		if ctx.Err() == nil {
			s.markDegraded()
		}
		return
	}
	s.alive.Store(max(n, 1))
	s.degraded.Store(false)
}
