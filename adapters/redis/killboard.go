package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Kill-board defaults.
const (
	// DefaultKillPrefix namespaces the kill-switch keys: the hash of rules
	// (prefix + "rules") and the channel changes are announced on
	// (prefix + "changed").
	DefaultKillPrefix = "arrowhead:kill:"
	// killResync is how often a watcher reloads even without an
	// announcement, and pings its subscription: a change announced while a
	// connection was silently half-open is picked up within this time.
	killResync = 15 * time.Second
	// killRetry is the pause before a failed subscription is tried again.
	killRetry = 250 * time.Millisecond
)

// KillBoard keeps kill-switch rules in a Redis hash (the durable record)
// and announces every change on a pub/sub channel, so every replica
// reloads within a round trip. It is safe for concurrent use.
type KillBoard struct {
	client  *goredis.Client
	rules   string
	channel string
	clock   ports.Clock
}

var _ ports.KillBoard = (*KillBoard)(nil)

// NewKillBoard returns a board on client under DefaultKillPrefix (or
// prefix, when not empty). clock may be nil (the system clock).
func NewKillBoard(client *goredis.Client, prefix string, clock ports.Clock) (*KillBoard, error) {
	if client == nil {
		return nil, ErrNilClient
	}
	if prefix == "" {
		prefix = DefaultKillPrefix
	}
	if clock == nil {
		clock = ports.SystemClock{}
	}
	return &KillBoard{client: client, rules: prefix + "rules", channel: prefix + "changed", clock: clock}, nil
}

// unavailable hides go-redis's error text (it may name an address).
func unavailable(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w: %w", op, ports.ErrKillBoardUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, ports.ErrKillBoardUnavailable)
}

// Throw records r and announces the change, in one transaction.
func (b *KillBoard) Throw(ctx context.Context, r ports.KillRule) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding a kill rule: %w", err)
	}
	_, err = b.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, b.rules, r.ID, raw)
		p.Publish(ctx, b.channel, r.ID)
		return nil
	})
	if err != nil {
		return unavailable("throwing a kill rule", err)
	}
	return nil
}

// Lift removes the rule id and announces the change.
func (b *KillBoard) Lift(ctx context.Context, id string) (bool, error) {
	var del *goredis.IntCmd
	_, err := b.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		del = p.HDel(ctx, b.rules, id)
		p.Publish(ctx, b.channel, id)
		return nil
	})
	if err != nil {
		return false, unavailable("lifting a kill rule", err)
	}
	return del.Val() > 0, nil
}

// List returns the active rules, oldest first; rules that ended are
// removed from the hash as they are met.
func (b *KillBoard) List(ctx context.Context) ([]ports.KillRule, error) {
	all, err := b.client.HGetAll(ctx, b.rules).Result()
	if err != nil {
		return nil, unavailable("listing kill rules", err)
	}
	now := b.clock.Now()
	out := make([]ports.KillRule, 0, len(all))
	var ended []string
	for id, raw := range all {
		var r ports.KillRule
		if err := json.Unmarshal([]byte(raw), &r); err != nil || r.ID != id {
			// Not ours (or damaged): never enforced, never deleted.
			continue
		}
		if !r.Active(now) {
			ended = append(ended, id)
			continue
		}
		out = append(out, r)
	}
	if len(ended) > 0 {
		// Best effort: a failed clean-up is retried on the next listing.
		_ = b.client.HDel(ctx, b.rules, ended...).Err()
	}
	slices.SortFunc(out, func(x, y ports.KillRule) int { return x.Created.Compare(y.Created) })
	return out, nil
}

// Watch subscribes to the change channel and calls changed on every
// announcement, on every (re)subscription (a lost connection ends the
// subscription and a new one is made; its confirmation arrives here), and
// every killResync. It returns when ctx ends.
func (b *KillBoard) Watch(ctx context.Context, changed func()) {
	for ctx.Err() == nil {
		b.watchOnce(ctx, changed)
		select {
		case <-ctx.Done():
		case <-time.After(killRetry):
		}
	}
}

func (b *KillBoard) watchOnce(ctx context.Context, changed func()) {
	ps := b.client.Subscribe(ctx, b.channel)
	defer ps.Close()
	// A receive waits on the socket, not on ctx: closing the subscription
	// is what ends it when ctx does.
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer stop()
	for ctx.Err() == nil {
		msg, err := ps.ReceiveTimeout(ctx, killResync)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Quiet: resynchronize, and make the next receive prove
				// the connection (a dead one errors and reconnects).
				changed()
				_ = ps.Ping(ctx)
				continue
			}
			// A lost connection: start over with a fresh subscription,
			// whose confirmation reloads what was missed meanwhile.
			return
		}
		switch msg.(type) {
		case *goredis.Subscription, *goredis.Message:
			changed()
		}
	}
}
