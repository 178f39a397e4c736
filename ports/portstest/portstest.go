// Package portstest holds small, deterministic test doubles for the ports,
// shared by the core's and the adapters' tests. Nothing here is wired into
// a running server.
package portstest

import (
	"context"
	"sync"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Audit records every audit record.
type Audit struct {
	mu      sync.Mutex
	records []ports.AuditRecord
}

// Record implements ports.AuditSink.
func (a *Audit) Record(_ context.Context, r ports.AuditRecord) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.records = append(a.records, r)
}

// Records returns a copy of what was recorded.
func (a *Audit) Records() []ports.AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ports.AuditRecord(nil), a.records...)
}

// Last returns the most recent record.
func (a *Audit) Last() ports.AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.records) == 0 {
		return ports.AuditRecord{}
	}
	return a.records[len(a.records)-1]
}

// Tracer hands out spans that remember how they ended.
type Tracer struct {
	mu    sync.Mutex
	Spans []*Span
}

// Span is a recorded span.
type Span struct {
	Kind    ports.ComponentKind
	Name    string
	Carrier ports.TraceCarrier
	Ended   bool
	Status  string
	Refusal string
}

// TraceID implements ports.Span.
func (s *Span) TraceID() string { return s.Carrier["traceparent"] }

// End implements ports.Span.
func (s *Span) End(status, refusal string) { s.Ended, s.Status, s.Refusal = true, status, refusal }

// Start implements ports.Tracer.
func (t *Tracer) Start(ctx context.Context, kind ports.ComponentKind, name string, c ports.TraceCarrier) (context.Context, ports.Span) {
	s := &Span{Kind: kind, Name: name, Carrier: c}
	t.mu.Lock()
	t.Spans = append(t.Spans, s)
	t.mu.Unlock()
	return ctx, s
}

// AllowAll grants every action; it stands for an authorizer in tests that
// are not about authorization.
type AllowAll struct{}

// Authorize implements ports.Authorizer.
func (AllowAll) Authorize(context.Context, ports.Principal, ports.Action, ports.Resource) ports.Decision {
	return ports.Decision{Allowed: true, Reason: "test"}
}

// Counter is a rate store that admits perMinute calls per key and never
// refills: deterministic for tests.
//
// It also keeps flow marks (ports.FlowStore) in memory, expiring them on the
// system clock: the exfiltration guard of an app under test records and
// recalls through it as through the real stores.
type Counter struct {
	mu    sync.Mutex
	seen  map[string]int
	Err   error
	Calls int
	marks map[string]map[uint64]time.Time
}

// Remember implements ports.FlowStore.
func (c *Counter) Remember(_ context.Context, caller string, marks []uint64, ttl time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.marks == nil {
		c.marks = map[string]map[uint64]time.Time{}
	}
	m := c.marks[caller]
	if m == nil {
		m = map[uint64]time.Time{}
		c.marks[caller] = m
	}
	until := time.Now().Add(ttl)
	for _, k := range marks {
		m[k] = until
	}
	return nil
}

// Recall implements ports.FlowStore.
func (c *Counter) Recall(_ context.Context, caller string, marks []uint64) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now, n := time.Now(), 0
	for _, k := range marks {
		if until, ok := c.marks[caller][k]; ok && now.Before(until) {
			n++
		}
	}
	return n, nil
}

// Take implements ports.RateStore.
func (c *Counter) Take(_ context.Context, key string, perMinute int) (ports.RateDecision, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Calls++
	if c.Err != nil {
		return ports.RateDecision{}, c.Err
	}
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	if c.seen[key] >= perMinute {
		return ports.RateDecision{Allowed: false, RetryAfter: time.Minute / time.Duration(perMinute)}, nil
	}
	c.seen[key]++
	return ports.RateDecision{Allowed: true}, nil
}

// Clock is a settable clock.
type Clock struct {
	mu sync.Mutex
	T  time.Time
}

// Now implements ports.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.T
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.T = c.T.Add(d)
}

// Egress answers every fetch with Response, or with Err when set, and
// records the requests.
type Egress struct {
	Response ports.FetchResponse
	Err      error

	mu       sync.Mutex
	requests []ports.FetchRequest
}

// Fetch records req and answers.
func (e *Egress) Fetch(_ context.Context, req ports.FetchRequest) (ports.FetchResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.requests = append(e.requests, req)
	return e.Response, e.Err
}

// Requests returns the requests made so far.
func (e *Egress) Requests() []ports.FetchRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]ports.FetchRequest(nil), e.requests...)
}

// FileJail serves Data (or Err) for every path and records the last path
// asked for.
type FileJail struct {
	Data []byte
	Err  error

	mu   sync.Mutex
	last string
}

// ReadFile records rel and answers.
func (j *FileJail) ReadFile(_ context.Context, rel string, _ int64) ([]byte, ports.FileInfo, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.last = rel
	return j.Data, ports.FileInfo{Path: rel, Size: int64(len(j.Data))}, j.Err
}

// LastPath is the path of the last read.
func (j *FileJail) LastPath() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.last
}
