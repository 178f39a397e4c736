package core

import (
	"context"
	"slices"
	"sync"

	"github.com/arrowhead-go/arrowhead/ports"
)

// LocalKillBoard is the in-process ports.KillBoard: the rules live as long
// as the process, and only this process hears of them. It is what an App
// runs on when no shared board (Redis, PostgreSQL) is configured.
type LocalKillBoard struct {
	clock ports.Clock

	mu       sync.Mutex
	rules    map[string]ports.KillRule
	watchers map[int]func()
	nextID   int
}

var _ ports.KillBoard = (*LocalKillBoard)(nil)

// NewLocalKillBoard returns an empty in-process board; nil clock is the
// system clock.
func NewLocalKillBoard(clock ports.Clock) *LocalKillBoard {
	if clock == nil {
		clock = ports.SystemClock{}
	}
	return &LocalKillBoard{clock: clock, rules: map[string]ports.KillRule{}, watchers: map[int]func(){}}
}

// Throw records r and tells every watcher.
func (b *LocalKillBoard) Throw(_ context.Context, r ports.KillRule) error {
	b.mu.Lock()
	b.rules[r.ID] = r
	b.mu.Unlock()
	b.notify()
	return nil
}

// Lift removes the rule id and tells every watcher.
func (b *LocalKillBoard) Lift(_ context.Context, id string) (bool, error) {
	b.mu.Lock()
	_, ok := b.rules[id]
	delete(b.rules, id)
	b.mu.Unlock()
	if ok {
		b.notify()
	}
	return ok, nil
}

// List returns the active rules, oldest first, dropping those that ended.
func (b *LocalKillBoard) List(context.Context) ([]ports.KillRule, error) {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]ports.KillRule, 0, len(b.rules))
	for id, r := range b.rules {
		if !r.Active(now) {
			delete(b.rules, id)
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(x, y ports.KillRule) int { return x.Created.Compare(y.Created) })
	return out, nil
}

// Watch calls changed now and after every change until ctx ends.
func (b *LocalKillBoard) Watch(ctx context.Context, changed func()) {
	b.mu.Lock()
	id := b.nextID
	b.nextID++
	b.watchers[id] = changed
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.watchers, id)
		b.mu.Unlock()
	}()
	changed()
	<-ctx.Done()
}

func (b *LocalKillBoard) notify() {
	b.mu.Lock()
	fns := make([]func(), 0, len(b.watchers))
	for _, fn := range b.watchers {
		fns = append(fns, fn)
	}
	b.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
