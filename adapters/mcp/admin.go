package mcp

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The kill-switch admin endpoint: list, throw and lift live rules over
// HTTP. It is served only with authentication on, and only to a verified
// token holding AdminKillScope (default deny: no other scope, and no
// "local operator", reaches it).
const (
	// AdminKillPath lists (GET) and throws (POST) rules; AdminKillPath +
	// "/{id}" lifts one (DELETE).
	AdminKillPath = "/admin/kill"
	// AdminKillScope is the scope a token must hold to use the endpoint.
	// No tool asks for it, so granting it grants nothing else.
	AdminKillScope = "arrowhead:admin:kill"
	// maxAdminBody caps a throw's request body.
	maxAdminBody = 16 << 10
	// maxKillFor bounds a rule's duration given in seconds (a year).
	maxKillFor = 365 * 24 * 3600
)

// throwRequest is a POST to AdminKillPath.
type throwRequest struct {
	Tool   string `json:"tool"`
	Family string `json:"family"`
	Caller string `json:"caller"`
	// ForSeconds is how long the rule holds; 0 holds it until lifted.
	ForSeconds int64  `json:"for_seconds"`
	Reason     string `json:"reason"`
}

// ruleView is a rule as the endpoint shows it.
type ruleView struct {
	ports.KillRule
	Target string `json:"target"`
}

// AdminHandler returns the admin endpoint's handler for app. principal
// resolves the verified caller of a request (the bearer middleware runs
// in front of it); refused is told of a request refused for its scope.
func AdminHandler(app *core.App, principal func(r *http.Request) ports.Principal, refused func(r *http.Request, reason string)) http.Handler {
	if refused == nil {
		refused = func(*http.Request, string) {}
	}
	mux := http.NewServeMux()
	admit := func(w http.ResponseWriter, r *http.Request) (ports.Principal, bool) {
		p := principal(r)
		// AllScopes is the local operator's; the endpoint is for tokens.
		if !p.Authenticated || p.AllScopes || !p.HasScope(AdminKillScope) {
			refused(r, "insufficient_scope")
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+AdminKillScope+`"`)
			writeJSON(w, http.StatusForbidden, map[string]any{"error": "insufficient_scope", "scope": AdminKillScope})
			return p, false
		}
		return p, true
	}
	mux.HandleFunc("GET "+AdminKillPath, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := admit(w, r); !ok {
			return
		}
		rules, err := app.KillRules(r.Context())
		if err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "the kill-switch board is unavailable"})
			return
		}
		out := make([]ruleView, 0, len(rules))
		for _, rule := range rules {
			out = append(out, ruleView{KillRule: rule, Target: core.RuleTarget(rule)})
		}
		writeJSON(w, http.StatusOK, map[string]any{"rules": out})
	})
	mux.HandleFunc("POST "+AdminKillPath, func(w http.ResponseWriter, r *http.Request) {
		p, ok := admit(w, r)
		if !ok {
			return
		}
		var req throwRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAdminBody))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "the body must be a JSON object with tool, family, caller, for_seconds and reason"})
			return
		}
		if req.ForSeconds < 0 || req.ForSeconds > maxKillFor {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "for_seconds must be between 0 (until lifted) and a year"})
			return
		}
		rule := ports.KillRule{Tool: req.Tool, Family: req.Family, Caller: req.Caller, Reason: req.Reason}
		if req.ForSeconds > 0 {
			rule.Until = time.Now().Add(time.Duration(req.ForSeconds) * time.Second).UTC()
		}
		rule, err := app.ThrowKill(r.Context(), p, rule)
		switch {
		case errors.Is(err, ports.ErrKillBoardUnavailable):
			// Enforced here; the other replicas may not know.
			writeJSON(w, http.StatusAccepted, map[string]any{"rule": ruleView{rule, core.RuleTarget(rule)},
				"warning": "the kill-switch board is unavailable: the rule holds on this replica only"})
		case err != nil:
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		default:
			writeJSON(w, http.StatusCreated, map[string]any{"rule": ruleView{rule, core.RuleTarget(rule)}})
		}
	})
	mux.HandleFunc("DELETE "+AdminKillPath+"/{id}", func(w http.ResponseWriter, r *http.Request) {
		p, ok := admit(w, r)
		if !ok {
			return
		}
		found, err := app.LiftKill(r.Context(), p, r.PathValue("id"))
		switch {
		case err != nil:
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "the kill-switch board is unavailable"})
		case !found:
			writeJSON(w, http.StatusNotFound, map[string]any{"error": "no such rule"})
		default:
			writeJSON(w, http.StatusOK, map[string]any{"lifted": true})
		}
	})
	return mux
}
