package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"time"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Canary tripwires: a planted honeytoken (ARROWHEAD_CANARY_TOKENS, the
// canary file) seen in a call's arguments or in what a call sends out
// trips the caller: a kill-switch rule takes every egress tool away from
// them on every replica, for ARROWHEAD_CANARY_TRIP_SECONDS.

// DefaultCanaryTrip is how long a trip holds when the settings name no
// time.
const DefaultCanaryTrip = time.Hour

// canaryHit says where a canary was seen: never the value.
type canaryHit struct {
	canary string // its id (security.CanaryID)
	where  string // "argument:<declared name>", "argument", "uri", "model_request", ...
}

// scanArgs looks for a canary in every string (keys included) of a tool's
// decoded arguments. Only argument names the schema declares are named.
func (a *App) scanArgs(args map[string]any, schema *catalog.Schema) (canaryHit, bool) {
	// Sorted, so the same arguments always report the same place.
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		where := "argument"
		if schema != nil && schema.Properties[k] != nil {
			where = "argument:" + k
		}
		if id, ok := a.canaries.Match(k); ok {
			return canaryHit{id, where}, true
		}
		if id, ok := a.scanValue(args[k]); ok {
			return canaryHit{id, where}, true
		}
	}
	return canaryHit{}, false
}

// scanValue looks for a canary in every key and string of v, walked as
// the egress guard walks arguments.
func (a *App) scanValue(v any) (id string, hit bool) {
	walkStrings(v, func(_ string, s string) {
		if !hit {
			id, hit = a.canaries.Match(s)
		}
	})
	return id, hit
}

// scanStrings looks for a canary in named strings (prompt arguments,
// completion values, a resource URI).
func (a *App) scanStrings(where string, values ...string) (canaryHit, bool) {
	for _, v := range values {
		if id, ok := a.canaries.Match(v); ok {
			return canaryHit{id, where}, true
		}
	}
	return canaryHit{}, false
}

// tripRuleID is the id of p's trip rule: one per caller, so a second trip
// extends the first instead of piling up rules.
func tripRuleID(caller string) string {
	sum := sha256.Sum256([]byte("canary-trip\x00" + caller))
	return "trip-" + hex.EncodeToString(sum[:8])
}

// trip takes every egress tool away from p on every replica and writes the
// one audit line that says what tripped where.
func (a *App) trip(ctx context.Context, p ports.Principal, component string, hit canaryHit) {
	caller := callerKey(p)
	now := a.clock.Now()
	r := ports.KillRule{
		ID:      tripRuleID(caller),
		Family:  ports.EgressFamily,
		Caller:  caller,
		Until:   now.Add(a.tripFor).UTC(),
		Reason:  "canary",
		By:      "canary",
		Created: now.UTC(),
	}
	err := a.putRule(ctx, r)
	status, refusal := ports.StatusOK, ""
	if err != nil {
		status, refusal = ports.StatusError, "board_unavailable"
	}
	a.audit.Record(ctx, ports.AuditRecord{
		Time:    now,
		Subject: subjectOf(p),
		Kind:    ports.ComponentCanary,
		Name:    "trip",
		Status:  status,
		Refusal: refusal,
		Detail: map[string]string{
			"canary":    hit.canary,
			"component": component,
			"where":     hit.where,
			"rule":      r.ID,
			"target":    RuleTarget(r),
			"until":     r.Until.Format(time.RFC3339),
		},
	})
	if m, ok := a.metrics.(ports.TripMetrics); ok {
		m.RecordCanaryTrip(ctx, component)
	}
}

// callInfo is what the chain knows about the call a context serves, for
// checks made deeper down (a model request).
type callInfo struct {
	app       *App
	principal ports.Principal
	component string
}

type callInfoKey struct{}

func withCallInfo(ctx context.Context, ci *callInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, ci)
}

// CheckEgress looks for a canary in texts about to leave the server (a
// model request, say) on behalf of the guarded call ctx serves. A hit trips
// the caller and returns the refusal to send them; outside a guarded call,
// or with no canaries configured, it returns nil.
func CheckEgress(ctx context.Context, where string, texts ...string) error {
	ci, _ := ctx.Value(callInfoKey{}).(*callInfo)
	if ci == nil || ci.app.canaries.Len() == 0 {
		return nil
	}
	hit, ok := ci.app.scanStrings(where, texts...)
	if !ok {
		return nil
	}
	ci.app.trip(ctx, ci.principal, ci.component, hit)
	return killRefusal()
}

// scanPromptArgs looks for a canary in a prompt's arguments, naming the
// declared argument it was in.
func (a *App) scanPromptArgs(spec catalog.PromptSpec, args map[string]string) (canaryHit, bool) {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		where := "argument"
		if spec.Arg(k) != nil {
			where = "argument:" + k
		}
		if hit, ok := a.scanStrings(where, k, args[k]); ok {
			return hit, true
		}
	}
	return canaryHit{}, false
}
