// Package groupcommit gathers concurrent write calls into one transaction,
// and so one fsync: the cost that bounds durable write throughput. Both
// embedded stores use it (adapters/bolt over bbolt transactions,
// adapters/sqlite over SQL transactions with a savepoint per call); each
// supplies the commit that runs one gathered batch.
//
// A fixed gathering delay (bbolt's DB.Batch waits MaxBatchDelay after the
// first call) is wrong both ways for writers that are closed loops (an
// agent waits for one write to be acknowledged before it sends the next):
// too long for a lone writer, which pays it on every write, and too short
// for a batch that starts before the writers it just acknowledged are
// back. A Group waits instead for the callers it has reason to expect:
// those of the commit that just finished, about to return, plus the calls
// already gathered, never more than Wait for them, so a writer that went
// away costs one short wait.
package groupcommit

import (
	"sync"
	"time"
)

const (
	// Wait bounds how long a gathered batch waits for the callers it
	// expects once the writer is free.
	Wait = time.Millisecond
	// Max bounds the calls one transaction carries, so one commit stays
	// short (for the other processes waiting on a shared file, and for a
	// rerun after a failed call).
	Max = 1000
)

// Group gathers calls of type C (what one caller asks to run in the
// shared transaction). The zero value is ready to use; a Group is safe for
// concurrent use.
type Group[C any] struct {
	// writer is held by the leader of the batch being committed, and
	// waited on by the leader of the batch being gathered.
	writer sync.Mutex

	mu      sync.Mutex    // guards the fields below
	open    *gathering[C] // the batch accepting calls; nil when none
	returns int           // callers of the last commit, expected back
	doneAt  time.Time     // when the last commit ended
	// committing is how many calls the commit in progress carries.
	committing int
}

// State is what a Group holds at one moment: the calls of the batch being
// committed, and those gathered for the next.
type State struct {
	Committing, Gathering int
}

// State returns what g holds now, for tests that steer calls into a known
// batch.
func (g *Group[C]) State() State {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := State{Committing: g.committing}
	if g.open != nil {
		st.Gathering = len(g.open.calls)
	}
	return st
}

type gathering[C any] struct {
	calls []pending[C]
	// before is how many calls had been gathered when the previous
	// commit ended, before its callers could return.
	before int
	expect int           // calls to wait for; 0 until the writer is free
	full   chan struct{} // closed once len(calls) reaches expect
}

type pending[C any] struct {
	call C
	err  chan error
}

// Run adds call to the batch being gathered and returns its result once
// that batch has been committed. commit runs one transaction over the
// calls given, in order, and returns each call's result (its own error,
// or the commit's); it is called by one caller at a time.
func (g *Group[C]) Run(call C, commit func([]C) []error) error {
	p := pending[C]{call: call, err: make(chan error, 1)}
	g.mu.Lock()
	b := g.open
	leader := b == nil
	if leader {
		b = &gathering[C]{full: make(chan struct{})}
		g.open = b
	}
	b.calls = append(b.calls, p)
	if b.expect > 0 && len(b.calls) == b.expect {
		close(b.full)
	}
	if len(b.calls) >= Max {
		g.open = nil // full: later calls start the next batch
	}
	g.mu.Unlock()
	if leader {
		g.lead(b, commit)
	}
	return <-p.err
}

// expectation is how many calls b should carry once the writer is free:
// those gathered before the last commit ended, plus that commit's callers
// if it ended recently enough for them to be on their way back. Called
// with g.mu held.
func (g *Group[C]) expectation(b *gathering[C], now time.Time) int {
	expect := b.before
	if now.Sub(g.doneAt) < Wait {
		expect += g.returns
	}
	return min(max(expect, 1), Max)
}

// lead waits for the writer, then for the expected callers, and commits
// whatever has been gathered by then.
func (g *Group[C]) lead(b *gathering[C], commit func([]C) []error) {
	g.writer.Lock()
	g.mu.Lock()
	b.expect = g.expectation(b, time.Now())
	wait := len(b.calls) < b.expect
	g.mu.Unlock()
	if wait {
		t := time.NewTimer(Wait)
		select {
		case <-b.full:
		case <-t.C:
		}
		t.Stop()
	}
	g.mu.Lock()
	if g.open == b {
		g.open = nil
	}
	gathered := b.calls
	g.committing = len(gathered)
	g.mu.Unlock()

	calls := make([]C, len(gathered))
	for i, p := range gathered {
		calls[i] = p.call
	}
	results := commit(calls)

	g.mu.Lock()
	if g.open != nil {
		g.open.before = len(g.open.calls)
	}
	g.returns, g.doneAt = len(gathered), time.Now()
	g.committing = 0
	g.mu.Unlock()
	g.writer.Unlock()
	for i, p := range gathered {
		p.err <- results[i]
	}
}
