package inproc_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/inproc"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

func TestReplayGuardContract(t *testing.T) {
	portstest.RunReplayGuardContract(t, func(t *testing.T) (ports.ReplayGuard, func(time.Duration)) {
		c := newFakeClock()
		return inproc.NewRateStore(c), func(d time.Duration) { c.Advance(d) }
	})
}

// TestReplayGuardFullRefusesUntilKeysExpire: a full guard never forgets an
// unexpired key to make room (that would admit its replay); it refuses new
// keys until old ones expire, and then takes them again.
func TestReplayGuardFullRefusesUntilKeysExpire(t *testing.T) {
	ctx := context.Background()
	c := newFakeClock()
	const bound = 64
	s := inproc.NewRateStore(c, inproc.WithMaxReplayKeys(bound))
	var stored []string
	full := false
	for i := 0; i < 10*bound; i++ {
		key := "k" + strconv.Itoa(i)
		ok, err := s.FirstSeen(ctx, key, time.Minute)
		if errors.Is(err, inproc.ErrReplayFull) {
			full = true
			continue
		}
		if err != nil || !ok {
			t.Fatalf("FirstSeen(%s) = %v, %v", key, ok, err)
		}
		stored = append(stored, key)
	}
	if !full || len(stored) > bound {
		t.Fatalf("stored %d keys (full=%v); want at most %d and a refusal", len(stored), full, bound)
	}
	for _, key := range stored {
		if ok, err := s.FirstSeen(ctx, key, time.Minute); err != nil || ok {
			t.Fatalf("stored key %s forgotten while full: %v, %v", key, ok, err)
		}
	}
	c.Advance(time.Minute + time.Second)
	if ok, err := s.FirstSeen(ctx, "after-expiry", time.Minute); err != nil || !ok {
		t.Fatalf("after expiry FirstSeen = %v, %v; want room again", ok, err)
	}
}

func TestReplayGuardRefusesNonPositiveTTL(t *testing.T) {
	s := inproc.NewRateStore(newFakeClock())
	for _, ttl := range []time.Duration{0, -time.Second} {
		if _, err := s.FirstSeen(context.Background(), "k", ttl); !errors.Is(err, inproc.ErrInvalidReplayTTL) {
			t.Fatalf("ttl %v: err = %v; want ErrInvalidReplayTTL", ttl, err)
		}
	}
}
