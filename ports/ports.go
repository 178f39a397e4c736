// Package ports holds the interfaces the core needs from the outside world and
// the small value types they exchange. It imports only the standard library:
// adapters implement these interfaces, and the core depends on nothing else.
package ports

import (
	"context"
	"slices"
	"time"
)

// OperatorSubject is the subject of the local operator principal used when
// authentication is off (stdio): the person who started the process.
const OperatorSubject = "local-operator"

// Principal is the verified identity a call runs as. It is built only from a
// validated bearer token, from the local operator over stdio, or explicitly
// by a Go program that embeds the core. The zero value is anonymous.
type Principal struct {
	// Subject is the caller's stable identifier (the token's sub claim).
	Subject string
	// Issuer is the token's iss claim for a principal built from a bearer
	// token, and empty for the local operator and for a caller an embedding
	// Go program vouches for. It puts token callers in a namespace of their
	// own (see Key).
	Issuer string
	// Scopes are the capabilities the caller holds.
	Scopes []string
	// Authenticated is true for a verified token, the local operator, or an
	// embedding program that vouches for the caller.
	Authenticated bool
	// AllScopes is set only for the local operator over stdio, where auth is
	// off and the process owner may use every component in the profile.
	AllScopes bool
}

// Anonymous returns the principal of a caller nobody vouched for: every
// scoped component is denied to it.
func Anonymous() Principal { return Principal{} }

// Operator returns the local operator principal used over stdio with auth off.
func Operator() Principal {
	return Principal{Subject: OperatorSubject, Authenticated: true, AllScopes: true}
}

// NewPrincipal returns an authenticated principal holding scopes.
func NewPrincipal(subject string, scopes ...string) Principal {
	s := slices.Clone(scopes)
	slices.Sort(s)
	return Principal{Subject: subject, Scopes: slices.Compact(s), Authenticated: true}
}

// TokenKeyPrefix starts the Key of every principal built from a token.
const TokenKeyPrefix = "iss="

// Key is the identity every store keys what a principal owns by: issuer and
// subject together. A token principal's key is "iss=<issuer> sub=<subject>";
// the local operator's and an embedded caller's (no issuer) is the subject
// alone, as it always was, so their stored data keeps its owner. No token
// can name that namespace: a token's key always starts with TokenKeyPrefix,
// so a token whose sub is "local-operator" owns nothing of the operator's.
func (p Principal) Key() string {
	if p.Issuer == "" {
		return p.Subject
	}
	return TokenKeyPrefix + p.Issuer + " sub=" + p.Subject
}

// HasScope reports whether the principal holds scope.
func (p Principal) HasScope(scope string) bool {
	if !p.Authenticated {
		return false
	}
	if p.AllScopes {
		return true
	}
	return slices.Contains(p.Scopes, scope)
}

// Action is a verb the per-resource authorizer decides on.
type Action string

// The actions the catalog uses.
const (
	ActionRead    Action = "read"
	ActionSearch  Action = "search"
	ActionScan    Action = "scan"
	ActionWrite   Action = "write"
	ActionQuery   Action = "query"
	ActionIngest  Action = "ingest"
	ActionExecute Action = "execute"
	ActionNotify  Action = "notify"
)

// Resource kinds the authorizer distinguishes, so a grant over one kind never
// reaches another.
const (
	KindDocument  = "document"
	KindTable     = "table"
	KindTableless = "tableless"
	KindMemory    = "memory"
	KindKV        = "kv"
	KindRepoFile  = "repo_file"
	KindSandbox   = "sandbox"
	KindWebhook   = "webhook"
)

// Resource names what an action applies to. ID is a relative path, table
// name or similar identifier; it is never logged.
type Resource struct {
	Kind string
	ID   string
}

// Decision is an authorizer's answer. Reason is for operators (never sent to
// a caller and never containing the resource).
type Decision struct {
	Allowed bool
	Reason  string
}

// Authorizer is the per-resource gate, default deny. Implementations must be
// safe for concurrent use.
type Authorizer interface {
	Authorize(ctx context.Context, p Principal, action Action, r Resource) Decision
}

// RateDecision is the outcome of one rate-limit check.
type RateDecision struct {
	Allowed    bool
	RetryAfter time.Duration
}

// RateStore keeps per-key token buckets refilling at perMinute tokens a
// minute with a burst of perMinute. Take consumes one token when available.
// An error means the store could not answer; the caller decides what to do.
// Implementations must be safe for concurrent use.
type RateStore interface {
	Take(ctx context.Context, key string, perMinute int) (RateDecision, error)
}

// ComponentKind names the four kinds of guarded component (plus the HTTP
// door, which refuses before any component is reached).
type ComponentKind string

// Component kinds.
const (
	ComponentTool       ComponentKind = "tool"
	ComponentResource   ComponentKind = "resource"
	ComponentPrompt     ComponentKind = "prompt"
	ComponentCompletion ComponentKind = "completion"
	ComponentHTTP       ComponentKind = "http"
	// ComponentKillSwitch marks the audit line of a kill-switch rule
	// thrown or lifted, ComponentCanary that of a tripped canary; neither
	// is a call.
	ComponentKillSwitch ComponentKind = "killswitch"
	ComponentCanary     ComponentKind = "canary"
)

// Call statuses recorded in audit lines and metrics.
const (
	StatusOK      = "ok"
	StatusRefused = "refused"
	StatusError   = "error"
)

// AuditRecord is one structured audit line. It carries argument shapes
// (types and sizes), never argument values.
type AuditRecord struct {
	Time      time.Time
	Subject   string
	Kind      ComponentKind
	Name      string
	ArgShapes map[string]string
	Status    string
	Refusal   string
	Latency   time.Duration
	TraceID   string
	// Cause is the Go type of an internal error (never its text, which may
	// carry caller values).
	Cause string
	// Egress is the exfiltration guard's note: what it found in an egress
	// call's arguments (frame_phrase, returned_content) or that the user
	// confirmed the call (confirmed); empty otherwise.
	Egress string
	// Detail describes an operator action (a kill-switch rule, a canary
	// trip) under fixed keys. Its values are the server's or the
	// operator's, never a caller's argument or a canary's value.
	Detail map[string]string
}

// AuditSink receives exactly one record per guarded call. Implementations
// must be safe for concurrent use and must not block for long.
type AuditSink interface {
	Record(ctx context.Context, rec AuditRecord)
}

// TraceCarrier holds W3C trace-context fields (traceparent, tracestate) the
// caller sent in _meta or HTTP headers.
type TraceCarrier map[string]string

// Span is one traced call.
type Span interface {
	// TraceID returns the hex trace id, or "" when tracing is off.
	TraceID() string
	// End closes the span with the call's status and refusal kind.
	End(status, refusal string)
}

// Tracer opens a span per call, joining the caller's trace context.
type Tracer interface {
	Start(ctx context.Context, kind ComponentKind, name string, carrier TraceCarrier) (context.Context, Span)
}

// Metrics records call counts and durations by component and status, and
// refusals by kind (the guard stage that refused, or the tool's own).
type Metrics interface {
	RecordCall(ctx context.Context, kind ComponentKind, name, status, refusal string, elapsed time.Duration)
}

// TripMetrics is the optional ability of a Metrics to count canary trips
// by the component whose arguments or egress carried the canary.
type TripMetrics interface {
	RecordCanaryTrip(ctx context.Context, component string)
}

// CallMeta describes the protocol request a guarded call answers, for
// telemetry: the MCP adapter sets it, a library caller need not. Values
// are the protocol's, never a caller's argument, except ResourceURI.
type CallMeta struct {
	// ProtocolVersion is the MCP protocol version of the request.
	ProtocolVersion string
	// RequestID is the JSON-RPC request id, as text.
	RequestID string
	// SessionID is the MCP session id, when the transport has one.
	SessionID string
	// ResourceURI is the URI a resources/read asked for.
	ResourceURI string
}

type callMetaKey struct{}

// WithCallMeta returns ctx carrying m.
func WithCallMeta(ctx context.Context, m *CallMeta) context.Context {
	return context.WithValue(ctx, callMetaKey{}, m)
}

// CallMetaFrom returns the CallMeta in ctx, or nil.
func CallMetaFrom(ctx context.Context) *CallMeta {
	m, _ := ctx.Value(callMetaKey{}).(*CallMeta)
	return m
}

// Clock tells the time; tests substitute a fake.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// HealthState is a dependency's readiness.
type HealthState string

// Readiness states reported by /ready.
const (
	HealthOK       HealthState = "ok"
	HealthDegraded HealthState = "degraded"
	HealthDown     HealthState = "down"
)

// HealthReporter is a configured dependency that can say whether it is ready.
type HealthReporter interface {
	Name() string
	Health(ctx context.Context) HealthState
}

// HealthExplainer is a HealthReporter that can also say why it is not ok:
// /ready shows the reason beside the state. The reason is one sentence
// for an operator that names no path, value or secret; it is empty when
// the state is HealthOK.
type HealthExplainer interface {
	HealthReporter
	HealthReason(ctx context.Context) (HealthState, string)
}
