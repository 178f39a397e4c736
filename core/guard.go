package core

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// admission describes one call to guard: which component, what it needs,
// and how it is limited. The chain is the same for all four component kinds.
type admission struct {
	kind ports.ComponentKind
	// name is the component's name as audited and metered (never a caller
	// value; "unknown" stands in for a name that is not in the catalog).
	name string
	// known is false when the caller asked for something not in the catalog.
	known bool
	// killNames are the names the kill switch is checked against.
	killNames []string
	// target is the component as the live kill-switch rules match it
	// (killNames, plus a tool's family and whether it is egress).
	target killTarget
	// canary, when set, looks for a planted canary in what the call
	// carries (see canary.go).
	canary func() (canaryHit, bool)
	// scope is the scope the caller must hold; "" admits any authenticated
	// caller.
	scope string
	// perMinute is the rate ceiling; 0 disables limiting for this call.
	perMinute int
	// unknownMsg is the refusal text for a component the caller may not see.
	unknownMsg string
	shapes     map[string]string
	carrier    ports.TraceCarrier
	// egressNote, when set, points at the exfiltration guard's note for
	// the audit line (egress.go), filled in while the call runs.
	egressNote *string
}

// guard runs fn behind the full chain: span, audit start, kill switch, rate
// limit, scope check, fn (the handler), error boundary, one audit line, span
// end. It returns nil or a *catalog.ToolError; nothing else escapes.
func (a *App) guard(ctx context.Context, p ports.Principal, adm admission, fn func(context.Context) error) error {
	ctx, span := a.tracer.Start(ctx, adm.kind, adm.name, adm.carrier)
	start := a.clock.Now()
	if a.egress != nil && adm.target.egress {
		// The guard's check must see marks recorded before the call
		// arrived, on any replica; a store that keeps a local copy of them
		// proves its copy fresh against this instant (ports.WithFlowCut),
		// using the round trip the rate limit below makes anyway.
		ctx = ports.WithFlowCut(ctx, time.Now())
	}

	var err error
	if te := a.admit(ctx, p, adm); te != nil {
		err = te
	} else {
		if a.canaries.Len() > 0 {
			// Egress checks deeper down (CheckEgress) need to know whose
			// call this is; with no canaries they have nothing to check.
			ctx = withCallInfo(ctx, &callInfo{app: a, principal: p, component: adm.name})
		}
		err = boundary(ctx, fn)
	}

	status, refusal := outcome(err)
	elapsed := a.clock.Now().Sub(start)
	a.audit.Record(ctx, ports.AuditRecord{
		Time:      start,
		Subject:   subjectOf(p),
		Kind:      adm.kind,
		Name:      adm.name,
		ArgShapes: adm.shapes,
		Status:    status,
		Refusal:   refusal,
		Latency:   elapsed,
		TraceID:   span.TraceID(),
		Cause:     internalCause(err),
		Egress:    adm.note(),
	})
	a.metrics.RecordCall(ctx, adm.kind, adm.name, status, refusal, elapsed)
	span.End(status, refusal)
	return err
}

// note returns the exfiltration guard's audit note, if any.
func (adm admission) note() string {
	if adm.egressNote == nil {
		return ""
	}
	return *adm.egressNote
}

// admit applies the kill switch (a canary the call carries trips its
// caller first), the rate limit and the scope check, in that order.
func (a *App) admit(ctx context.Context, p ports.Principal, adm admission) *catalog.ToolError {
	if !adm.known {
		// Unknown names share one bucket per caller so probing is bounded
		// without creating state per invented name.
		if te := a.limit(ctx, p, adm.kind, "?", a.settings.Limit(defaultLimitVar, 0)); te != nil {
			return te
		}
		return unknownRefusal(p, adm.unknownMsg)
	}
	if te := a.killStage(ctx, p, adm); te != nil {
		return te
	}
	if te := a.limit(ctx, p, adm.kind, adm.name, adm.perMinute); te != nil {
		return te
	}
	if !p.Authenticated {
		return unknownRefusal(p, adm.unknownMsg)
	}
	if adm.scope != "" && !p.HasScope(adm.scope) {
		return catalog.Refuse(catalog.KindUnknown, adm.unknownMsg)
	}
	return nil
}

// unknownRefusal answers a caller who may not see the component. An
// anonymous caller is recorded as unauthenticated, but told the same thing
// as everyone else.
func unknownRefusal(p ports.Principal, msg string) *catalog.ToolError {
	if !p.Authenticated {
		return catalog.Refuse(catalog.KindUnauthenticated, msg)
	}
	return catalog.Refuse(catalog.KindUnknown, msg)
}

func (a *App) limit(ctx context.Context, p ports.Principal, kind ports.ComponentKind, name string, perMinute int) *catalog.ToolError {
	if !a.settings.RateLimitEnabled || perMinute <= 0 {
		return nil
	}
	key := callerKey(p) + "\x00" + string(kind) + "\x00" + name
	d, err := a.rates.Take(ctx, key, perMinute)
	if err != nil {
		// The store promises a local fallback; if it still fails, fail
		// closed rather than run unlimited.
		return &catalog.ToolError{Kind: catalog.KindRateLimited, Message: catalog.MsgRateLimited, RetryAfter: time.Second}
	}
	if !d.Allowed {
		retry := d.RetryAfter
		if retry < time.Second {
			retry = time.Second
		}
		return &catalog.ToolError{
			Kind:       catalog.KindRateLimited,
			Message:    fmt.Sprintf("Rate limit exceeded; retry after %d seconds.", int(retry.Round(time.Second)/time.Second)),
			RetryAfter: retry,
		}
	}
	return nil
}

// boundary runs fn, turning panics and undeliberate errors into a generic
// internal refusal. A ToolError passes verbatim.
func boundary(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			// The panic value may carry caller data: it is never rendered
			// or logged.
			err = catalog.Refuse(catalog.KindInternal, catalog.MsgInternal).WithCause(panicked{})
		}
	}()
	if err = fn(ctx); err == nil {
		return nil
	}
	if te, ok := catalog.AsToolError(err); ok {
		return te
	}
	if ctx.Err() != nil {
		return catalog.Refuse(catalog.KindFailed, "The call was cancelled or timed out.").WithCause(err)
	}
	return catalog.Refuse(catalog.KindInternal, catalog.MsgInternal).WithCause(err)
}

func outcome(err error) (status, refusal string) {
	if err == nil {
		return ports.StatusOK, ""
	}
	te, ok := catalog.AsToolError(err)
	if !ok {
		return ports.StatusError, string(catalog.KindInternal)
	}
	if te.Kind.IsFailure() {
		return ports.StatusError, string(te.Kind)
	}
	return ports.StatusRefused, string(te.Kind)
}

func subjectOf(p ports.Principal) string {
	if !p.Authenticated || p.Subject == "" {
		return "anonymous"
	}
	return p.Subject
}

// callerKey is who per-caller state (rate budgets, the egress guard's
// marks) belongs to: the principal's issuer-qualified key, so a token's
// subject never shares the stdio operator's or another issuer's budget.
func callerKey(p ports.Principal) string {
	if !p.Authenticated || p.Subject == "" {
		return "anonymous"
	}
	return p.Key()
}

// internalCause names the Go type of a masked error's cause for operators,
// without its text (which may carry caller values).
func internalCause(err error) string {
	// A successful call has no cause; AsToolError would still allocate
	// its target on every call.
	if err == nil {
		return ""
	}
	te, ok := catalog.AsToolError(err)
	if !ok || te.Kind != catalog.KindInternal {
		return ""
	}
	if c := te.Unwrap(); c != nil {
		return reflect.TypeOf(c).String()
	}
	return "deliberate"
}

// panicked marks a masked panic in the audit line's cause.
type panicked struct{}

func (panicked) Error() string { return "panic" }
