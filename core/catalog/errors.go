package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// RefusalKind names why a call did not succeed. Each kind is recorded
// distinctly in the audit line.
type RefusalKind string

// Refusal kinds. Internal, Unavailable and Failed are failures of the action
// (audit status "error", see IsFailure); every other kind refuses the call
// (status "refused"). Failed is a deliberate, caller-safe failure of the
// action itself (an upstream that answered badly, a connector that is down).
const (
	KindDisabled        RefusalKind = "disabled"
	KindRateLimited     RefusalKind = "rate_limited"
	KindUnknown         RefusalKind = "unknown"
	KindUnauthenticated RefusalKind = "unauthenticated"
	KindAuthorization   RefusalKind = "authorization"
	KindValidation      RefusalKind = "validation"
	KindInternal        RefusalKind = "internal"
	KindNotFound        RefusalKind = "not_found"
	KindUnavailable     RefusalKind = "unavailable"
	KindFailed          RefusalKind = "failed"
	// The exfiltration guard's (core/egress.go): an egress call whose
	// arguments carry content the server returned is refused (refuse mode,
	// or a client that cannot elicit), held while the user is asked to
	// confirm it (the retry carrying the answer has its own audit line), or
	// refused because the user declined.
	KindEgressGuard    RefusalKind = "egress_guard"
	KindEgressConfirm  RefusalKind = "egress_confirm"
	KindEgressDeclined RefusalKind = "egress_declined"
)

// IsFailure reports whether the kind is a failure of the action (status
// "error") rather than a refusal of the call (status "refused").
func (k RefusalKind) IsFailure() bool {
	return k == KindInternal || k == KindUnavailable || k == KindFailed
}

// ToolError is a deliberate, caller-safe error: its Message reaches the caller
// verbatim, so it must never carry a caller-supplied value, a path, a driver
// string or a secret. Anything that is not a ToolError is masked by the
// error boundary.
type ToolError struct {
	Kind    RefusalKind
	Message string
	// RetryAfter is a hint for rate-limited calls.
	RetryAfter time.Duration
	// Data is extra structured detail for the caller (for example the
	// attachment hook install payload). It must obey the same rule as Message.
	Data map[string]any
	// cause is kept for operators' debugging; never rendered.
	cause error
}

func (e *ToolError) Error() string { return e.Message }

// Unwrap returns the internal cause, if any.
func (e *ToolError) Unwrap() error { return e.cause }

// WithCause records an internal cause (never shown to the caller).
func (e *ToolError) WithCause(err error) *ToolError {
	c := *e
	c.cause = err
	return &c
}

// Refuse returns a ToolError of the given kind with a fixed message.
func Refuse(kind RefusalKind, message string) *ToolError {
	return &ToolError{Kind: kind, Message: message}
}

// Invalid returns a validation refusal; format arguments must never be
// caller-supplied values (argument names and limits are fine).
func Invalid(format string, args ...any) *ToolError {
	return &ToolError{Kind: KindValidation, Message: fmt.Sprintf(format, args...)}
}

// Denied is the per-resource authorization refusal. It never names the
// resource.
func Denied() *ToolError {
	return &ToolError{Kind: KindAuthorization, Message: "Not authorized for this resource."}
}

// Owner is the key a caller's own records (working sets, memories, tasks)
// are kept under: the verified subject only, never an argument. A caller
// without one is denied.
func Owner(p ports.Principal) (string, error) {
	if !p.Authenticated || p.Subject == "" {
		return "", Denied()
	}
	return p.Key(), nil
}

// NotFound is the refusal for a resource that does not exist or is not
// visible to the caller; it never names the resource.
func NotFound(what string) *ToolError {
	return &ToolError{Kind: KindNotFound, Message: what + " not found."}
}

// Failed is a deliberate failure of the action with a caller-safe message.
func Failed(message string) *ToolError {
	return &ToolError{Kind: KindFailed, Message: message}
}

// Unavailable reports a dependency that is not configured or not reachable.
func Unavailable(message string) *ToolError {
	return &ToolError{Kind: KindUnavailable, Message: message}
}

// StoreRefusal maps the failures every store shares onto caller-safe
// refusals naming the store (a phrase such as "The memory store"): a write
// whose outcome is unknown says so and how repeating it behaves (repeat,
// one sentence), a store that did not answer in time says that the call
// was not completed, and a store whose disk is full says that the change
// was not applied and that deletes still work. ok is false for anything else, which the caller's own
// mapping handles. A call the caller itself cancelled stays as it is.
func StoreRefusal(err error, store, repeat string) (_ error, ok bool) {
	switch {
	case errors.Is(err, ports.ErrOutcomeUnknown):
		return Refuse(KindUnavailable, store+" lost the connection while committing: the change may or may not have been applied. "+repeat).
			WithData(map[string]any{"outcome": "unknown"}).WithCause(err), true
	case errors.Is(err, context.DeadlineExceeded):
		return Refuse(KindUnavailable, store+" did not answer in time; the call was not completed.").WithCause(err), true
	case errors.Is(err, ports.ErrStoreFull):
		return Refuse(KindUnavailable, store+"'s disk is full: the change was not applied. Deletes still work, to free space.").WithCause(err), true
	case errors.Is(err, context.Canceled):
		return err, true
	}
	return nil, false
}

// WithData returns a copy of e carrying data for the caller.
func (e *ToolError) WithData(data map[string]any) *ToolError {
	c := *e
	c.Data = data
	return &c
}

// EgressRefusal maps a refusal or failure of the guarded egress path to a
// caller-safe ToolError: URL and destination problems are the caller's
// (validation), the rest are failures of the exchange, and anything that is
// not an egress error fails with otherwise. The reasons are fixed texts that
// never carry the URL, host or address; the egress error stays attached as
// the operators' cause.
func EgressRefusal(err error, otherwise string) error {
	reason := ports.EgressReasonOf(err)
	switch reason {
	case ports.EgressBadURL, ports.EgressScheme, ports.EgressCredentials,
		ports.EgressHostNotAllowed, ports.EgressPortNotAllowed, ports.EgressBlockedAddress:
		return Refuse(KindValidation, Sentence(string(reason))).WithCause(err)
	case ports.EgressResolve, ports.EgressConnect, ports.EgressTimeout, ports.EgressTooLarge,
		ports.EgressProtocol, ports.EgressTooManyRedirect, ports.EgressRedirectRefused:
		return Failed(Sentence(string(reason))).WithCause(err)
	}
	return Failed(otherwise).WithCause(err)
}

// Canonical refusal messages used by the guard chain. The unknown message is
// the same for a component that does not exist, is outside the profile, or is
// hidden by a missing scope, so none of those can be told apart.
const (
	MsgUnknownTool      = "Unknown tool."
	MsgUnknownResource  = "Unknown resource."
	MsgUnknownPrompt    = "Unknown prompt."
	MsgDisabled         = "This component is disabled by the operator."
	MsgRateLimited      = "Rate limit exceeded; retry later."
	MsgInternal         = "Internal error; the call was not completed."
	MsgUnauthenticated  = "Authentication required."
	MsgUnknownComponent = "Unknown component."
)

// AsToolError returns the ToolError in err's chain, if any.
func AsToolError(err error) (*ToolError, bool) { return errors.AsType[*ToolError](err) }
