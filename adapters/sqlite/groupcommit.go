package sqlite

import (
	"sync"
	"time"
)

// Group commit: concurrent Write calls share one transaction and so one
// fsync, the cost that bounds durable write throughput. This is the
// gatherer adapters/bolt uses, over SQL transactions: it waits for the
// callers it has reason to expect (those of the commit that just
// finished, about to return, plus the calls already gathered), never more
// than groupWait, so a lone writer pays at most one short wait and closed
// loops of writers land in the same commit.
//
// Unlike bbolt, SQLite has savepoints: a call that fails is rolled back
// alone inside the batch, so a failure never reruns the others.
const (
	// groupWait bounds how long a gathered batch waits for the callers
	// it expects once the writer is free.
	groupWait = time.Millisecond
	// groupMax bounds the calls one transaction carries, so one commit
	// stays short for the other processes waiting on the file.
	groupMax = 1000
)

// groupCommit gathers Write calls. The zero value is ready to use.
type groupCommit struct {
	// writer is held by the leader of the batch being committed, and
	// waited on by the leader of the batch being gathered.
	writer sync.Mutex

	mu      sync.Mutex // guards the fields below
	open    *gathering // the batch accepting calls; nil when none
	returns int        // callers of the last commit, expected back
	doneAt  time.Time  // when the last commit ended
}

type gathering struct {
	calls  []groupCall
	before int           // calls gathered when the previous commit ended
	expect int           // calls to wait for; 0 until the writer is free
	full   chan struct{} // closed once len(calls) reaches expect
}

type groupCall struct {
	fn  func(*Tx) error
	err chan error
}

// run adds fn to the batch being gathered and returns its result once
// that batch has committed. commit runs one transaction over the calls
// and returns each call's result.
func (g *groupCommit) run(fn func(*Tx) error, commit func([]groupCall) []error) error {
	call := groupCall{fn: fn, err: make(chan error, 1)}
	g.mu.Lock()
	b := g.open
	leader := b == nil
	if leader {
		b = &gathering{full: make(chan struct{})}
		g.open = b
	}
	b.calls = append(b.calls, call)
	if b.expect > 0 && len(b.calls) == b.expect {
		close(b.full)
	}
	if len(b.calls) >= groupMax {
		g.open = nil // full: later calls start the next batch
	}
	g.mu.Unlock()
	if leader {
		g.lead(b, commit)
	}
	return <-call.err
}

// expectation is how many calls b should carry once the writer is free.
// Called with g.mu held.
func (g *groupCommit) expectation(b *gathering, now time.Time) int {
	expect := b.before
	if now.Sub(g.doneAt) < groupWait {
		expect += g.returns
	}
	return min(max(expect, 1), groupMax)
}

// lead waits for the writer, then for the expected callers, and commits
// whatever has been gathered by then.
func (g *groupCommit) lead(b *gathering, commit func([]groupCall) []error) {
	g.writer.Lock()
	g.mu.Lock()
	b.expect = g.expectation(b, time.Now())
	wait := len(b.calls) < b.expect
	g.mu.Unlock()
	if wait {
		t := time.NewTimer(groupWait)
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
	calls := b.calls
	g.mu.Unlock()

	results := commit(calls)

	g.mu.Lock()
	if g.open != nil {
		g.open.before = len(g.open.calls)
	}
	g.returns, g.doneAt = len(calls), time.Now()
	g.mu.Unlock()
	g.writer.Unlock()
	for i, c := range calls {
		c.err <- results[i]
	}
}
