package ports

import (
	"context"
	"errors"
	"time"
)

// EgressFamily is the pseudo-family a KillRule names to take out every
// egress tool (a tool whose catalog annotation has OpenWorld true) at once:
// what a tripped canary throws for its caller.
const EgressFamily = "egress"

// KillRule takes components out of service: one tool (or prompt or
// resource, by name), one family (or every egress tool), or, with neither,
// everything; for every caller or for one. A rule without Until holds
// until it is lifted.
type KillRule struct {
	// ID names the rule for Lift; the core assigns it when the rule is
	// thrown.
	ID string `json:"id"`
	// Tool is a component name; empty when the rule names a family or
	// nothing.
	Tool string `json:"tool,omitempty"`
	// Family is a family id or EgressFamily; empty when the rule names a
	// tool or nothing.
	Family string `json:"family,omitempty"`
	// Caller is the caller identity the rule applies to; empty applies it
	// to every caller.
	Caller string `json:"caller,omitempty"`
	// Until is when the rule stops applying; zero holds it until lifted.
	Until time.Time `json:"until,omitzero"`
	// Reason is the operator's short note (or "canary" for a trip); it is
	// audited, never shown to the affected caller.
	Reason string `json:"reason,omitempty"`
	// By is who threw the rule.
	By string `json:"by,omitempty"`
	// Created is when the rule was thrown.
	Created time.Time `json:"created"`
}

// Active reports whether the rule still applies at now.
func (r KillRule) Active(now time.Time) bool {
	return r.Until.IsZero() || now.Before(r.Until)
}

// ErrKillBoardUnavailable is returned by a KillBoard whose backing service
// does not answer. It never carries an address or a credential.
var ErrKillBoardUnavailable = errors.New("the kill-switch board is unavailable")

// KillBoard keeps the kill-switch rules every replica enforces and tells
// every replica when they change. Implementations are safe for concurrent
// use; every method honours ctx.
type KillBoard interface {
	// Throw records r durably (replacing a rule with the same ID) and
	// tells every replica.
	Throw(ctx context.Context, r KillRule) error
	// Lift removes the rule id and tells every replica; it reports whether
	// the rule existed.
	Lift(ctx context.Context, id string) (bool, error)
	// List returns every recorded rule that is still active.
	List(ctx context.Context) ([]KillRule, error)
	// Watch calls changed after every Throw or Lift on any replica, and
	// each time its subscription is (re)established (so a replica that
	// reconnects reloads what it missed). It returns when ctx ends.
	// changed must not block for long.
	Watch(ctx context.Context, changed func())
}
