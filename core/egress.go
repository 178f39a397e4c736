package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The exfiltration guard: a stage of the chain, run after admission and
// before an egress tool's handler (a tool whose annotations say OpenWorld),
// and, for every component, when its result leaves the chain.
//
// On the way out it labels the result (catalog.FlowLabels) and, when the
// result is untrusted or secret-bearing, remembers for the caller, for the
// window (ARROWHEAD_EGRESS_GUARD_WINDOW_SECONDS), its frame markers, item
// hashes and winnowed fingerprints (security.RecordFingerprints) in the
// rate-limit store's flow marks, shared across replicas with Redis.
//
// On the way in, an egress call whose argument strings carry a frame's
// fixed phrase, or a mark remembered for the caller (a 32- or 64-hex token
// the server issued, or a fingerprint of returned text; strings are checked
// as sent and percent-decoded) is refused or, in confirm mode with a client
// that can elicit, held until the user confirms it. Arguments with nothing
// long enough to fingerprint and no hex token cost no store call.

// Egress guard modes (ARROWHEAD_EGRESS_GUARD).
const (
	EgressRefuse  = "refuse"
	EgressConfirm = "confirm"
	EgressOff     = "off"
)

// EgressConfirmInputID names the guard's confirmation request.
const EgressConfirmInputID = "arrowhead_egress_confirm"

// Limits of the guard's work on one call.
const (
	// maxTokenMarks bounds the hex tokens recorded per result.
	maxTokenMarks = 256
	// maxCheckTokens bounds the hex tokens looked up per call; a call
	// carrying more is treated as carrying returned content.
	maxCheckTokens = 4096
	// egressSealTTL bounds how long a confirmation stays answerable, and how
	// long an accepted one covers the tool's own follow-up input requests.
	egressSealTTL = 10 * time.Minute
	// confirmedStatePrefix starts an input state that carries an accepted
	// confirmation in front of the tool's own state.
	confirmedStatePrefix = "egress-ok."
	// redactedPrefix starts every redaction placeholder the secret scanner
	// writes ("[REDACTED:TYPE:tag]"): a result carrying one is secret.
	redactedPrefix = "[REDACTED:"
)

// Caller-safe messages of the guard. None names the content.
const (
	msgEgressFrame     = "The call was refused: its arguments carry an untrusted-data frame this server returned, and this tool sends data out of the server."
	msgEgressReturned  = "The call was refused: its arguments carry content this server returned to you as untrusted or secret (a frame marker, an item hash or matching text), and this tool sends data out of the server."
	msgEgressUnchecked = "The call was refused: its arguments are larger, or carry more hex tokens, than the exfiltration guard checks, and this tool sends data out of the server."
	msgEgressNoElicit  = " This client cannot confirm it; send only your own text."
	msgEgressDeclined  = "The call was declined; nothing was sent."
	msgEgressAsk       = "This call would send content this server returned as untrusted or secret data out of the server (%s). Send it anyway?"
	msgEgressStale     = "The confirmation does not match this call or has expired; nothing was sent."
)

// repoKinds are the frame source kinds of the configured repository's own
// source (code_read, pack_context pins, symbol_map, dependency_graph). Their
// fingerprints are kept apart (salted with repoMarkSalt) and checked only on
// open-world exits, not on the assist tools' model requests: those tools
// exist to send this repository's code to the operator's model (code_explain
// reads and sends whole files itself), so a diff or a question quoting code
// the caller read is their ordinary use, not a new exit. Frame markers and
// item hashes of such frames are checked everywhere, and so are web pages,
// documents, files, database rows, memories and model output.
var repoKinds = map[string]bool{"repo_file": true, "symbols": true, "dependencies": true}

// repoMarkSalt separates repository fingerprints from the others.
const repoMarkSalt uint64 = 0x7265706f5f66696c // "repo_fil"

// Audit notes of the guard (AuditRecord.Egress).
const (
	egressNoteFrame     = "frame_phrase"
	egressNoteReturned  = "returned_content"
	egressNoteUnchecked = "unchecked"
	egressNoteConfirmed = "confirmed"
)

// egressGuard is the stage's configuration and state. Safe for concurrent
// use.
type egressGuard struct {
	mode   string
	window time.Duration
	flows  ports.FlowStore
	seal   catalog.InputSeal
}

// errNoFlowStore refuses a rate store that cannot keep flow marks while the
// guard is on.
var errNoFlowStore = errors.New("ARROWHEAD_EGRESS_GUARD: the rate-limit store keeps no flow marks (ports.FlowStore); set ARROWHEAD_EGRESS_GUARD=off to run without the guard")

// newEgressGuard returns the stage, or nil when it is off.
func newEgressGuard(s *settings.Settings, rates ports.RateStore) (*egressGuard, error) {
	switch s.EgressGuard {
	case EgressOff:
		return nil, nil
	case EgressRefuse, EgressConfirm, "":
	default:
		return nil, fmt.Errorf("ARROWHEAD_EGRESS_GUARD: unknown mode")
	}
	flows, ok := rates.(ports.FlowStore)
	if !ok {
		return nil, errNoFlowStore
	}
	window := settings.Seconds(s.EgressGuardWindowSeconds)
	if window <= 0 {
		window = time.Hour
	}
	mode := s.EgressGuard
	if mode == "" {
		mode = EgressConfirm
	}
	return &egressGuard{mode: mode, window: window, flows: flows, seal: catalog.NewInputSeal(egressSealTTL)}, nil
}

// egressConfirmAnswer is what the confirmation asks the client for.
type egressConfirmAnswer struct {
	Confirm bool `json:"confirm" description:"Send it anyway."`
}

var egressConfirmSchema = sync.OnceValue(func() *catalog.Schema {
	s, err := catalog.SchemaFor[egressConfirmAnswer](nil)
	if err != nil {
		panic(err) // a fixed type; the guard's tests derive it
	}
	return s
})

// egressVerdict is what the inbound check decided.
type egressVerdict struct {
	// note is the audit note ("" when nothing was found).
	note string
	// ask is the confirmation to send instead of running the tool.
	ask *catalog.InputRequest
	// confirmed is true when the user accepted; the tool's own input
	// requests then carry the acceptance in their state.
	confirmed bool
	parts     []string
}

// check runs the inbound half for an egress tool. It returns a refusal, or
// a verdict that either asks (ask set) or lets the call run; call's input
// state is unwrapped when it carried the guard's acceptance.
func (g *egressGuard) check(ctx context.Context, p ports.Principal, tool string, modelBound bool, raw []byte, args map[string]any, call *catalog.Call) (egressVerdict, error) {
	var v egressVerdict
	found, overflow := false, false
	var tokens []uint64
	var texts []string
	scan := func(s string) {
		if strings.Contains(s, content.FrameBeginPhrase) || strings.Contains(s, content.FrameEndPhrase) {
			found = true
			return
		}
		tokens, overflow = appendTokenMarks(tokens, s)
		texts = append(texts, s)
	}
	walkStrings(args, func(_ string, s string) {
		if found || overflow {
			return
		}
		scan(s)
		if strings.ContainsAny(s, "%+") {
			if d, err := url.QueryUnescape(s); err == nil && d != s {
				scan(d)
			} else if d, err := url.PathUnescape(s); err == nil && d != s {
				scan(d)
			}
		}
	})
	switch {
	case found:
		v.note = egressNoteFrame
	case overflow:
		// More tokens than the guard looks up: it cannot vouch for the
		// call, so it is held like one carrying returned content.
		v.note = egressNoteUnchecked
	default:
		// All strings are fingerprinted as one text at the base window
		// (security.QueryFingerprints), so padding one field cannot push
		// another out of the check; a text too large to fingerprint is
		// treated as unchecked.
		marks := tokens
		if joined := strings.Join(texts, "\n"); len(joined) >= security.FingerprintK {
			fps, ok := security.QueryFingerprints(joined)
			if !ok {
				v.note = egressNoteUnchecked
				break
			}
			marks = append(marks, fps...)
			if !modelBound {
				for _, fp := range fps {
					marks = append(marks, fp^repoMarkSalt)
				}
			}
		}
		if len(marks) == 0 {
			break
		}
		n, err := g.flows.Recall(ctx, callerKey(p), marks)
		if err != nil {
			// Unable to vouch for the call: refuse it rather than let it out.
			return v, catalog.Unavailable("The exfiltration guard could not check this call; try again shortly.").WithCause(err)
		}
		if n > 0 {
			v.note = egressNoteReturned
		}
	}
	if v.note == "" {
		return v, nil
	}
	msg := msgEgressReturned
	what := "a frame marker, an item hash or matching text"
	switch v.note {
	case egressNoteFrame:
		msg, what = msgEgressFrame, "an untrusted-data frame"
	case egressNoteUnchecked:
		msg, what = msgEgressUnchecked, "more than the guard can check"
	}
	if g.mode == EgressRefuse {
		return v, catalog.Refuse(catalog.KindEgressGuard, msg)
	}
	if !call.Caps.Elicitation {
		return v, catalog.Refuse(catalog.KindEgressGuard, msg+msgEgressNoElicit)
	}
	sum := sha256.Sum256(raw)
	// parts[1] is the caller's key: the shared seals are kept under it.
	v.parts = []string{"egress-confirm", callerKey(p), tool, hex.EncodeToString(sum[:])}
	now := time.Now()
	if inner, ok := g.acceptedState(ctx, now, call.InputState, v.parts); ok {
		call.InputState = inner
		v.confirmed = true
		return v, nil
	}
	if ans, answered := call.Inputs[EgressConfirmInputID]; answered {
		if !g.openShared(ctx, callerKey(p), now, call.InputState, append(v.parts, "ask")) {
			return v, catalog.Refuse(catalog.KindEgressDeclined, msgEgressStale)
		}
		if ok, _ := ans.Content["confirm"].(bool); ans.Action != "accept" || !ok {
			return v, catalog.Refuse(catalog.KindEgressDeclined, msgEgressDeclined)
		}
		call.InputState = ""
		v.confirmed = true
		return v, nil
	}
	v.ask = &catalog.InputRequest{
		ID:      EgressConfirmInputID,
		Message: fmt.Sprintf(msgEgressAsk, what),
		Schema:  egressConfirmSchema(),
		State:   g.sealShared(ctx, callerKey(p), now, append(v.parts, "ask")),
	}
	return v, catalog.Refuse(catalog.KindEgressConfirm, "The call is waiting for the user's confirmation.")
}

// acceptedState unwraps an input state that carries the guard's acceptance
// for parts, returning the tool's own state behind it.
func (g *egressGuard) acceptedState(ctx context.Context, now time.Time, state string, parts []string) (string, bool) {
	rest, ok := strings.CutPrefix(state, confirmedStatePrefix)
	if !ok {
		return "", false
	}
	seal, inner, ok := strings.Cut(rest, "|")
	if !ok || !g.openShared(ctx, parts[1], now, seal, append(parts, "accepted")) {
		return "", false
	}
	return inner, true
}

// carryAcceptance wraps the tool's own input request state so its retry
// still carries the user's acceptance.
func (g *egressGuard) carryAcceptance(ctx context.Context, v egressVerdict, need *catalog.InputRequest) {
	if !v.confirmed || need == nil {
		return
	}
	need.State = confirmedStatePrefix + g.sealShared(ctx, v.parts[1], time.Now(), append(v.parts, "accepted")) + "|" + need.State
}

// observe is the outbound half: it labels what a component returned and
// remembers its marks for the caller when it is untrusted or secret.
// texts are every string of the result.
func (g *egressGuard) observe(ctx context.Context, p ports.Principal, walk func(func(key, s string))) (catalog.FlowLabels, error) {
	labels := catalog.FlowLabels{Integrity: catalog.IntegrityTrusted, Confidentiality: catalog.ConfidentialityPublic}
	var o observed
	walk(o.add)
	untrusted := len(o.seen) > 0
	if untrusted {
		labels.Integrity = catalog.IntegrityUntrusted
	}
	switch {
	case o.secret:
		labels.Confidentiality = catalog.ConfidentialitySecret
	case o.internal:
		labels.Confidentiality = catalog.ConfidentialityInternal
	}
	if g == nil || (!untrusted && !o.secret) {
		return labels, nil
	}
	tokens := append(o.tokens, o.hashes...)
	if len(tokens) > maxTokenMarks {
		tokens = tokens[:maxTokenMarks]
	}
	marks := make([]uint64, 0, len(tokens)+security.MaxRecordFingerprints)
	for _, t := range tokens {
		marks = append(marks, security.TokenMark(t))
	}
	bodies := o.bodies
	if !untrusted {
		// Secret-bearing but unframed (a scan report): its own text.
		bodies = o.plain
	}
	marks = append(marks, security.RecordFingerprints(strings.Join(bodies, "\n"))...)
	if len(o.repoBodies) > 0 {
		for _, fp := range security.RecordFingerprints(strings.Join(o.repoBodies, "\n")) {
			marks = append(marks, fp^repoMarkSalt)
		}
	}
	if err := g.flows.Remember(ctx, callerKey(p), marks, g.window); err != nil {
		return labels, catalog.Unavailable("The result could not be recorded for the exfiltration guard; try again shortly.").WithCause(err)
	}
	return labels, nil
}

// observed is what observe gathers from a result's strings. It is one
// value, not a closure's several captured variables, so a call that
// returns plain trusted text allocates once for it instead of once each.
type observed struct {
	bodies, repoBodies []string
	tokens, hashes     []string
	plain              []string
	// plainRoom holds the first plain strings: most results have a few,
	// and they then cost no allocation of their own.
	plainRoom        [4]string
	seen             map[string]bool // frame markers
	secret, internal bool
}

func (o *observed) add(key, s string) {
	if !o.secret && strings.Contains(s, redactedPrefix) {
		o.secret = true
	}
	if key == "sha256" && len(s) == 64 {
		o.hashes = append(o.hashes, s)
	}
	if !strings.Contains(s, content.FrameBeginPhrase) {
		if o.plain == nil {
			o.plain = o.plainRoom[:0]
		}
		o.plain = append(o.plain, s)
		return
	}
	content.Frames(s, func(f content.FrameInfo) {
		if o.seen[f.Marker] {
			return
		}
		if o.seen == nil {
			o.seen = map[string]bool{}
		}
		o.seen[f.Marker] = true
		o.tokens = append(o.tokens, f.Marker)
		if len(f.SHA256) == 64 {
			o.tokens = append(o.tokens, f.SHA256)
		}
		if f.Kind != "url" {
			o.internal = true
		}
		if repoKinds[f.Kind] {
			o.repoBodies = append(o.repoBodies, f.Body)
			return
		}
		o.bodies = append(o.bodies, f.Body)
	})
}

// appendTokenMarks appends the mark of every maximal run of exactly 32 or
// 64 hex digits in s (a frame marker's or a SHA-256's shape); overflow is
// true once there are more than maxCheckTokens.
func appendTokenMarks(marks []uint64, s string) (_ []uint64, overflow bool) {
	run := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isHex(s[i]) {
			run++
			continue
		}
		if run == 32 || run == 64 {
			if len(marks) >= maxCheckTokens {
				return marks, true
			}
			marks = append(marks, security.TokenMark(s[i-run:i]))
		}
		run = 0
	}
	return marks, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// walkStrings calls fn with every string in a decoded JSON value, object
// keys included (with an empty key), and each string value's key.
func walkStrings(v any, fn func(key, s string)) {
	walkValue("", v, fn)
}

func walkValue(key string, v any, fn func(key, s string)) {
	switch x := v.(type) {
	case string:
		fn(key, x)
	case map[string]any:
		for k, e := range x {
			fn("", k)
			walkValue(k, e, fn)
		}
	case []any:
		for _, e := range x {
			walkValue(key, e, fn)
		}
	case []string:
		for _, e := range x {
			fn(key, e)
		}
	}
}
