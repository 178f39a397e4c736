package bolt

import (
	"sync"
	"time"

	"go.etcd.io/bbolt"
)

// Group commit: concurrent Batch calls share one write transaction and so
// one pair of fdatasyncs, the cost that bounds durable write throughput.
//
// bbolt's own DB.Batch waits a fixed MaxBatchDelay after the first call of
// a batch. Writers are mostly closed loops (an agent waits for one write to
// be acknowledged before it sends the next), so a fixed wait is either too
// long (a lone writer pays it on every write) or too short (a batch starts
// before the writers it just acknowledged are back, and they are left for
// the following commit). The gatherer here waits instead for the callers it
// has reason to expect: those of the commit that just finished, which are
// about to return, plus the calls already gathered. It never waits more
// than groupWait for them, so a writer that went away costs one short wait.
const (
	// groupWait bounds how long a gathered batch waits for the callers
	// it expects once the writer is free.
	groupWait = time.Millisecond
	// groupMax bounds the calls one transaction carries, so one commit
	// (and a rerun after a failed call) stays short.
	groupMax = 1000
)

// groupCommit gathers Batch calls. The zero value is ready to use.
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
	calls []groupCall
	// before is how many calls had been gathered when the previous
	// commit ended, before its callers could return.
	before int
	expect int           // calls to wait for; 0 until the writer is free
	full   chan struct{} // closed once len(calls) reaches expect
}

type groupCall struct {
	fn  func(*bbolt.Tx) error
	err chan error
}

// run adds fn to the batch being gathered and returns once that batch's
// transaction has committed (nil), or with fn's own error or the commit's.
// commit runs one transaction over the calls given; it returns the index
// of the call that failed with that call's error, or -1 with the commit's
// error (nil on success).
func (g *groupCommit) run(fn func(*bbolt.Tx) error, commit func([]groupCall) (int, error)) error {
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

// expectation is how many calls b should carry, once the writer is free:
// those gathered before the last commit ended, plus that commit's callers
// if it ended recently enough for them to be on their way back. Called
// with g.mu held.
func (g *groupCommit) expectation(b *gathering, now time.Time) int {
	expect := b.before
	if now.Sub(g.doneAt) < groupWait {
		expect += g.returns
	}
	return min(max(expect, 1), groupMax)
}

// lead waits for the writer, then for the expected callers, and commits
// whatever has been gathered by then.
func (g *groupCommit) lead(b *gathering, commit func([]groupCall) (int, error)) {
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

	results := make([]error, len(calls))
	pending := calls
	index := make([]int, len(calls)) // pending[i] is calls[index[i]]
	for i := range index {
		index[i] = i
	}
	for len(pending) > 0 {
		failed, err := commit(pending)
		if failed < 0 {
			for _, i := range index {
				results[i] = err
			}
			break
		}
		// The transaction rolled back. Every call before the failed one
		// will run again on the state it ran on, so the failure stands as
		// that call's answer; the others are retried without it.
		results[index[failed]] = err
		pending = append(pending[:failed:failed], pending[failed+1:]...)
		index = append(index[:failed:failed], index[failed+1:]...)
	}

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
