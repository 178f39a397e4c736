package inproc

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Bounds of the in-process flow marks (the exfiltration guard's memory of
// what each caller was given).
const (
	// MaxFlowMarksPerCaller bounds the marks kept for one caller. A result
	// records at most a few hundred, so this holds the last hundred or so
	// untrusted results of a busy caller; beyond it the marks closest to
	// expiry are forgotten first.
	MaxFlowMarksPerCaller = 32_768
	// MaxFlowCallers bounds how many callers have marks at once; beyond it
	// the callers whose marks expire soonest are forgotten first. Together
	// the two bound the table near 16 bytes x 32k x 4k = 2 GiB at the very
	// worst; a caller at the cap is rare, so in practice it is far smaller.
	MaxFlowCallers = 4096
)

// ErrInvalidTTL is returned by Remember for a ttl that is not positive.
var ErrInvalidTTL = errors.New("flow marks need a positive time to live")

// flowTable is the in-process ports.FlowStore state: per caller, each mark
// with the instant (ns since the store's origin) it expires.
type flowTable struct {
	mu      sync.Mutex
	callers map[string]*flowMarks
}

type flowMarks struct {
	expiry map[uint64]int64
	// latest is the furthest expiry of any mark: the caller's marks are all
	// gone once it has passed.
	latest int64
}

func newFlowTable() flowTable { return flowTable{callers: map[string]*flowMarks{}} }

var _ ports.FlowStore = (*RateStore)(nil)

// Remember records marks for caller until ttl from now (a mark recorded
// again is kept until the later of its two expiries).
func (s *RateStore) Remember(_ context.Context, caller string, marks []uint64, ttl time.Duration) error {
	if ttl <= 0 {
		return ErrInvalidTTL
	}
	if len(marks) == 0 {
		return nil
	}
	now := int64(s.clock.Now().Sub(s.origin))
	until := now + int64(ttl)
	key := storedKey(caller)
	t := &s.flows
	t.mu.Lock()
	defer t.mu.Unlock()
	fm := t.callers[key]
	if fm == nil {
		if len(t.callers) >= MaxFlowCallers {
			t.dropCallers(now)
		}
		fm = &flowMarks{expiry: make(map[uint64]int64, len(marks))}
		t.callers[key] = fm
	}
	for _, m := range marks {
		if _, ok := fm.expiry[m]; !ok && len(fm.expiry) >= MaxFlowMarksPerCaller {
			fm.trim(now)
		}
		if fm.expiry[m] < until {
			fm.expiry[m] = until
		}
	}
	fm.latest = max(fm.latest, until)
	return nil
}

// Recall counts the marks recorded for caller that have not expired.
func (s *RateStore) Recall(_ context.Context, caller string, marks []uint64) (int, error) {
	if len(marks) == 0 {
		return 0, nil
	}
	now := int64(s.clock.Now().Sub(s.origin))
	key := storedKey(caller)
	t := &s.flows
	t.mu.Lock()
	defer t.mu.Unlock()
	fm := t.callers[key]
	if fm == nil {
		return 0, nil
	}
	if fm.latest <= now {
		delete(t.callers, key)
		return 0, nil
	}
	n := 0
	for _, m := range marks {
		if e, ok := fm.expiry[m]; ok && e > now {
			n++
		}
	}
	return n, nil
}

// trim makes room in a caller's full set: expired marks go, then, if that
// freed less than an eighth, the marks closest to expiry (so the next trim
// is that many inserts away).
func (fm *flowMarks) trim(now int64) {
	for m, e := range fm.expiry {
		if e <= now {
			delete(fm.expiry, m)
		}
	}
	target := MaxFlowMarksPerCaller - MaxFlowMarksPerCaller/8
	if len(fm.expiry) <= target {
		return
	}
	es := make([]int64, 0, len(fm.expiry))
	for _, e := range fm.expiry {
		es = append(es, e)
	}
	slices.Sort(es)
	cut := es[len(es)-target-1]
	for m, e := range fm.expiry {
		if e <= cut {
			delete(fm.expiry, m)
		}
	}
}

// dropCallers makes room for one more caller: callers whose marks have all
// expired go, then, if none had, the eighth whose marks expire soonest.
// The caller holds t.mu.
func (t *flowTable) dropCallers(now int64) {
	for k, fm := range t.callers {
		if fm.latest <= now {
			delete(t.callers, k)
		}
	}
	if len(t.callers) < MaxFlowCallers {
		return
	}
	ls := make([]int64, 0, len(t.callers))
	for _, fm := range t.callers {
		ls = append(ls, fm.latest)
	}
	slices.Sort(ls)
	cut := ls[max(len(ls)/8, 1)-1]
	for k, fm := range t.callers {
		if fm.latest <= cut {
			delete(t.callers, k)
		}
	}
}
