package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The live kill switch: rules thrown while the server runs (by the CLI, the
// admin endpoint or a tripped canary), kept on a ports.KillBoard that every
// replica watches. ARROWHEAD_DISABLED_TOOLS (SetDisabled) stays the static,
// global switch beside it.

// Kill-switch limits and defaults.
const (
	// MaxKillRules bounds the live rules a replica enforces; a board
	// holding more is a misuse, and the extra rules (newest first kept)
	// are ignored with an audit line.
	MaxKillRules = 1024
	// maxCallerLen bounds a rule's caller identity.
	maxCallerLen = 256
	// maxReasonLen bounds a rule's reason.
	maxReasonLen = 200
	// killBoardTimeout bounds one board operation made on a call's path (a
	// canary trip) or when reloading.
	killBoardTimeout = 2 * time.Second
)

// Errors of the kill switch. None quotes a caller's value.
var (
	ErrKillRuleEmpty   = errors.New("a kill-switch rule names a tool, a family or a caller")
	ErrKillRuleBoth    = errors.New("a kill-switch rule names a tool or a family, not both")
	ErrKillRuleTool    = errors.New("a kill-switch rule's tool must be a component name (letters, digits and _:/.{}+-, at most 128)")
	ErrKillRuleFamily  = errors.New("a kill-switch rule's family must be a family id or \"egress\"")
	ErrKillRuleCaller  = errors.New("a kill-switch rule's caller must be printable text of at most 256 bytes")
	ErrKillRuleReason  = errors.New("a kill-switch rule's reason must be printable text of at most 200 bytes")
	ErrKillRuleExpired = errors.New("a kill-switch rule's end lies in the past")
)

// ValidateKillRule checks a rule's shape (not whether the names exist on
// this replica: replicas may serve different profiles).
func ValidateKillRule(r ports.KillRule, now time.Time) error {
	switch {
	case r.Tool == "" && r.Family == "" && r.Caller == "":
		return ErrKillRuleEmpty
	case r.Tool != "" && r.Family != "":
		return ErrKillRuleBoth
	case r.Tool != "" && !componentName(r.Tool):
		return ErrKillRuleTool
	case r.Family != "" && r.Family != ports.EgressFamily && !slices.Contains(catalog.Families, catalog.Family(r.Family)):
		return ErrKillRuleFamily
	case len(r.Caller) > maxCallerLen || !printable(r.Caller):
		return ErrKillRuleCaller
	case len(r.Reason) > maxReasonLen || !printable(r.Reason):
		return ErrKillRuleReason
	case !r.Until.IsZero() && !now.Before(r.Until):
		return ErrKillRuleExpired
	}
	return nil
}

func componentName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_:/.{}+-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// CallerKey returns the identity a kill-switch rule names to apply to p.
func CallerKey(p ports.Principal) string { return callerKey(p) }

// killTarget describes a component as the live rules match it.
type killTarget struct {
	names  []string
	family catalog.Family
	egress bool
}

// liveKills is the bookkeeping behind App.liveRules, the live rule set
// that calls read without a lock.
type liveKills struct {
	// pending are rules thrown here that the board did not take (it was
	// unreachable): enforced on this replica until they end.
	mu      sync.Mutex
	pending map[string]ports.KillRule
	// reload serializes reloads, so the set stored last is the one listed
	// last.
	reload sync.Mutex
	// board is the board's last listing (guarded by reload).
	board     []ports.KillRule
	listeners []func()
	expiry    *time.Timer
}

// killedBy reports whether a live rule takes target out of service for p.
func (a *App) killedBy(p ports.Principal, t killTarget) bool {
	rules := a.liveRules.Load()
	if rules == nil || len(*rules) == 0 {
		return false
	}
	now := a.clock.Now()
	caller, subject := callerKey(p), subjectOf(p)
	for _, r := range *rules {
		// A rule names a caller by its full key (a canary trip does) or,
		// as an operator types it, by a token's subject alone: that one
		// errs on the side of refusing, taking the subject out under
		// every issuer.
		if (r.Caller != "" && r.Caller != caller && r.Caller != subject) || !r.Active(now) {
			continue
		}
		if killRule(r).takes(t) {
			return true
		}
	}
	return false
}

// killedForEveryone reports whether a live rule that names no caller takes
// target out of service: the tool is then no longer part of the enabled
// surface the integrity digest covers, as with ARROWHEAD_DISABLED_TOOLS.
// A rule for one caller (an operator's, a canary trip) leaves the digest
// alone: the digest is the deployment's, one value for every caller.
func (a *App) killedForEveryone(t killTarget) bool {
	rules := a.liveRules.Load()
	if rules == nil {
		return false
	}
	now := a.clock.Now()
	for _, r := range *rules {
		if r.Caller == "" && r.Active(now) && killRule(r).takes(t) {
			return true
		}
	}
	return false
}

// killRule is a rule as it is matched against a component.
type killRule ports.KillRule

// takes reports whether the rule's target part (tool, family, egress, or
// everything for a caller-only rule) covers t; whom it names is checked
// by the caller.
func (r killRule) takes(t killTarget) bool {
	switch {
	case r.Tool != "":
		return slices.Contains(t.names, r.Tool)
	case r.Family == ports.EgressFamily:
		return t.egress
	case r.Family != "":
		return t.family != "" && string(t.family) == r.Family
	default:
		// A caller-only rule: everything, for that caller.
		return true
	}
}

// toolTarget is a tool as the kill switch sees it.
func (a *App) toolTarget(name string) killTarget {
	e, ok := a.tools[name]
	if !ok {
		return killTarget{names: []string{name}}
	}
	return killTarget{names: []string{name}, family: e.spec.Family(), egress: e.spec.Annotations().OpenWorld}
}

// ThrowKill records r on the board (every replica enforces it within the
// board's propagation time) and enforces it here at once. by is who threw
// it; the audit line names them. The rule's ID is assigned unless set.
func (a *App) ThrowKill(ctx context.Context, by ports.Principal, r ports.KillRule) (ports.KillRule, error) {
	now := a.clock.Now()
	if err := ValidateKillRule(r, now); err != nil {
		return r, err
	}
	if r.ID == "" {
		r.ID = newRuleID()
	}
	r.Created = now.UTC()
	r.By = subjectOf(by)
	err := a.putRule(ctx, r)
	a.auditKill(ctx, by, "throw", r, err)
	return r, err
}

// putRule writes r to the board and reloads; a board that does not take it
// (or cannot be read back) leaves it enforced on this replica (fail closed)
// until it ends or the board lists it.
func (a *App) putRule(ctx context.Context, r ports.KillRule) error {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killBoardTimeout)
	defer cancel()
	err := a.board.Throw(bctx, r)
	if err == nil && a.ReloadKills(bctx) == nil {
		return nil
	}
	a.kills.mu.Lock()
	if a.kills.pending == nil {
		a.kills.pending = map[string]ports.KillRule{}
	}
	a.kills.pending[r.ID] = r
	a.kills.mu.Unlock()
	a.storeRules(nil, false)
	return err
}

// LiftKill removes the rule id everywhere; it reports whether it existed.
func (a *App) LiftKill(ctx context.Context, by ports.Principal, id string) (bool, error) {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killBoardTimeout)
	defer cancel()
	a.kills.mu.Lock()
	_, wasPending := a.kills.pending[id]
	delete(a.kills.pending, id)
	a.kills.mu.Unlock()
	found, err := a.board.Lift(bctx, id)
	found = found || wasPending
	if err == nil {
		err = a.ReloadKills(bctx)
	}
	if err != nil {
		a.storeRules(nil, false)
	}
	a.auditKill(ctx, by, "lift", ports.KillRule{ID: id}, err)
	return found, err
}

// KillRules lists the rules in force: the board's and those only this
// replica holds.
func (a *App) KillRules(ctx context.Context) ([]ports.KillRule, error) {
	rules, err := a.board.List(ctx)
	if err != nil {
		return nil, err
	}
	return a.withPending(rules), nil
}

// OnKillChange registers fn to run whenever the live rules change on this
// replica (a throw, a lift, a rule running out), so listings can follow.
// fn must not block for long.
func (a *App) OnKillChange(fn func()) {
	a.kills.reload.Lock()
	defer a.kills.reload.Unlock()
	a.kills.listeners = append(a.kills.listeners, fn)
}

// WatchKills keeps the live rules in step with the board until ctx ends:
// every change anywhere, and every (re)connection, reloads the whole set.
func (a *App) WatchKills(ctx context.Context) {
	a.board.Watch(ctx, func() {
		rctx, cancel := context.WithTimeout(ctx, killBoardTimeout)
		defer cancel()
		_ = a.ReloadKills(rctx)
	})
	a.kills.reload.Lock()
	if a.kills.expiry != nil {
		a.kills.expiry.Stop()
	}
	a.kills.reload.Unlock()
}

// ReloadKills replaces the live rules with the board's.
func (a *App) ReloadKills(ctx context.Context) error {
	a.kills.reload.Lock()
	defer a.kills.reload.Unlock()
	rules, err := a.board.List(ctx)
	if err != nil {
		return err
	}
	a.storeRulesLocked(rules, true)
	return nil
}

// storeRules re-stores the live set with the pending rules merged; with
// fromBoard false it keeps the board's last listing.
func (a *App) storeRules(rules []ports.KillRule, fromBoard bool) {
	a.kills.reload.Lock()
	defer a.kills.reload.Unlock()
	a.storeRulesLocked(rules, fromBoard)
}

func (a *App) storeRulesLocked(rules []ports.KillRule, fromBoard bool) {
	old := a.liveRules.Load()
	if fromBoard {
		a.kills.board = rules
	}
	merged := a.withPending(a.kills.board)
	now := a.clock.Now()
	active := merged[:0:0]
	for _, r := range merged {
		if r.Active(now) {
			active = append(active, r)
		}
	}
	slices.SortFunc(active, func(x, y ports.KillRule) int { return y.Created.Compare(x.Created) })
	if len(active) > MaxKillRules {
		active = active[:MaxKillRules]
	}
	a.liveRules.Store(&active)
	if old == nil || !sameRules(*old, active) {
		for _, fn := range a.kills.listeners {
			fn()
		}
	}
	a.armExpiryLocked(active, now)
}

// armExpiryLocked sets a timer for the first rule to run out, so listings
// follow an expiry as they follow a lift.
func (a *App) armExpiryLocked(active []ports.KillRule, now time.Time) {
	if a.kills.expiry != nil {
		a.kills.expiry.Stop()
		a.kills.expiry = nil
	}
	var first time.Time
	for _, r := range active {
		if !r.Until.IsZero() && (first.IsZero() || r.Until.Before(first)) {
			first = r.Until
		}
	}
	if first.IsZero() {
		return
	}
	a.kills.expiry = time.AfterFunc(first.Sub(now)+time.Millisecond, func() { a.storeRules(nil, false) })
}

// withPending merges the rules only this replica holds into rules,
// dropping the pending ones that ended or that the board now has.
func (a *App) withPending(rules []ports.KillRule) []ports.KillRule {
	a.kills.mu.Lock()
	defer a.kills.mu.Unlock()
	if len(a.kills.pending) == 0 {
		return rules
	}
	now := a.clock.Now()
	out := slices.Clone(rules)
	for id, p := range a.kills.pending {
		switch {
		case !p.Active(now):
			delete(a.kills.pending, id)
		case slices.ContainsFunc(rules, func(r ports.KillRule) bool { return r.ID == id }):
			delete(a.kills.pending, id)
		default:
			out = append(out, p)
		}
	}
	return out
}

func sameRules(x, y []ports.KillRule) bool {
	return slices.EqualFunc(x, y, func(a, b ports.KillRule) bool {
		return a.ID == b.ID && a.Until.Equal(b.Until) && a.Tool == b.Tool && a.Family == b.Family && a.Caller == b.Caller
	})
}

func newRuleID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// RuleTarget describes what a rule takes out of service, for audit lines
// and listings.
func RuleTarget(r ports.KillRule) string {
	switch {
	case r.Tool != "":
		return "tool:" + r.Tool
	case r.Family == ports.EgressFamily:
		return "egress"
	case r.Family != "":
		return "family:" + r.Family
	default:
		return "everything"
	}
}

// auditKill writes the one audit line of a throw or lift.
func (a *App) auditKill(ctx context.Context, by ports.Principal, action string, r ports.KillRule, err error) {
	detail := map[string]string{"rule": r.ID}
	if action == "throw" {
		detail["target"] = RuleTarget(r)
		detail["caller"] = r.Caller
		if r.Caller == "" {
			detail["caller"] = "*"
		}
		detail["until"] = "lifted"
		if !r.Until.IsZero() {
			detail["until"] = r.Until.UTC().Format(time.RFC3339)
		}
		if r.Reason != "" {
			detail["reason"] = r.Reason
		}
	}
	status, refusal := ports.StatusOK, ""
	if err != nil {
		// The rule holds on this replica; the others may not know of it.
		status, refusal = ports.StatusError, "board_unavailable"
	}
	a.audit.Record(ctx, ports.AuditRecord{
		Time:    a.clock.Now(),
		Subject: subjectOf(by),
		Kind:    ports.ComponentKillSwitch,
		Name:    action,
		Status:  status,
		Refusal: refusal,
		Detail:  detail,
	})
}

// killRefusal is the answer of the kill-switch stage.
func killRefusal() *catalog.ToolError {
	return catalog.Refuse(catalog.KindDisabled, catalog.MsgDisabled)
}

// describeRule is a one-line rendering for operators (CLI listings).
func DescribeRule(r ports.KillRule) string {
	caller := r.Caller
	if caller == "" {
		caller = "*"
	}
	until := "until lifted"
	if !r.Until.IsZero() {
		until = "until " + r.Until.UTC().Format(time.RFC3339)
	}
	s := fmt.Sprintf("%s  %s  caller=%s  %s", r.ID, RuleTarget(r), caller, until)
	if r.Reason != "" {
		s += "  reason=" + r.Reason
	}
	return s
}

// killStage is the chain's kill-switch stage: a canary in the call trips its
// caller (which may take this very call away), then the static switch
// (ARROWHEAD_DISABLED_TOOLS) and the live rules decide.
func (a *App) killStage(ctx context.Context, p ports.Principal, adm admission) *catalog.ToolError {
	if adm.canary != nil {
		if hit, ok := adm.canary(); ok {
			a.trip(ctx, p, adm.name, hit)
		}
	}
	if a.disabled(adm.killNames...) {
		return killRefusal()
	}
	t := adm.target
	if t.names == nil {
		t.names = adm.killNames
	}
	if a.killedBy(p, t) {
		return killRefusal()
	}
	return nil
}
