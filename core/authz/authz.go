// Package authz is the per-resource authorization engine: default deny, a
// JSON list of grants, each naming who (subject or "*"), which actions, on
// which resource kinds, under which prefix. A scope says a caller may use a
// tool at all; this says whether it may act on this document, table or
// memory. It implements ports.Authorizer.
package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Policy limits.
const (
	MaxPolicyBytes  = 1 << 20
	MaxGrants       = 1000
	MaxPrefixBytes  = 1024
	MaxSubjectBytes = 256
	// SubjectVar is substituted with the caller's subject in a prefix.
	SubjectVar = "${subject}"
	// AnySubject matches every authenticated caller.
	AnySubject = "*"
)

// Known actions and kinds; a policy naming anything else is refused, so a
// typo cannot silently grant nothing (or something else).
var (
	knownActions = []ports.Action{ports.ActionRead, ports.ActionSearch, ports.ActionScan, ports.ActionWrite,
		ports.ActionQuery, ports.ActionIngest, ports.ActionExecute, ports.ActionNotify}
	knownKinds = []string{ports.KindDocument, ports.KindTable, ports.KindTableless, ports.KindMemory,
		ports.KindKV, ports.KindRepoFile, ports.KindSandbox, ports.KindWebhook}
)

// Grant is one rule of a policy.
type Grant struct {
	Subject string         `json:"subject"`
	Actions []ports.Action `json:"actions"`
	// Kinds the grant covers; omitted means documents only, so a corpus
	// grant can never widen to tables, memory or code.
	Kinds  []string `json:"kinds,omitempty"`
	Prefix string   `json:"prefix"`
}

// Policy is a validated grant list. It is immutable and safe for concurrent
// use.
type Policy struct {
	grants []Grant
}

var _ ports.Authorizer = (*Policy)(nil)

// ErrInvalidPolicy wraps every reason a policy is refused.
var ErrInvalidPolicy = errors.New("invalid authorization policy")

// Parse validates a policy document {"grants":[...]}.
func Parse(data []byte) (*Policy, error) {
	fail := func(format string, args ...any) (*Policy, error) {
		return nil, fmt.Errorf("%w: %s", ErrInvalidPolicy, fmt.Sprintf(format, args...))
	}
	if len(data) > MaxPolicyBytes {
		return fail("larger than %d bytes", MaxPolicyBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc struct {
		Grants *[]Grant `json:"grants"`
	}
	if err := dec.Decode(&doc); err != nil {
		return fail("not a JSON object of the form {\"grants\":[...]} with only subject, actions, kinds and prefix in each grant")
	}
	if dec.More() {
		return fail("trailing data after the policy object")
	}
	if doc.Grants == nil {
		return fail("the grants list is missing")
	}
	grants := *doc.Grants
	if len(grants) > MaxGrants {
		return fail("more than %d grants", MaxGrants)
	}
	for i := range grants {
		g := &grants[i]
		n := i + 1
		if g.Subject == "" || len(g.Subject) > MaxSubjectBytes || !utf8.ValidString(g.Subject) {
			return fail("grant %d: subject must be \"*\" or a subject of at most %d bytes", n, MaxSubjectBytes)
		}
		if len(g.Actions) == 0 {
			return fail("grant %d: actions must list at least one action", n)
		}
		for _, a := range g.Actions {
			if !slices.Contains(knownActions, a) {
				return fail("grant %d: unknown action (known: %s)", n, joinActions())
			}
		}
		if len(g.Kinds) == 0 {
			g.Kinds = []string{ports.KindDocument}
		}
		for _, k := range g.Kinds {
			if !slices.Contains(knownKinds, k) {
				return fail("grant %d: unknown kind (known: %s)", n, strings.Join(knownKinds, ", "))
			}
		}
		if err := checkPrefix(g.Prefix); err != nil {
			return fail("grant %d: prefix %s", n, err)
		}
	}
	return &Policy{grants: grants}, nil
}

func joinActions() string {
	s := make([]string, len(knownActions))
	for i, a := range knownActions {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

func checkPrefix(p string) error {
	if len(p) > MaxPrefixBytes || !utf8.ValidString(p) {
		return fmt.Errorf("must be valid UTF-8 of at most %d bytes", MaxPrefixBytes)
	}
	if strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") {
		return errors.New("must be relative, without backslashes or NUL")
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." || part == "." {
			return errors.New("must not contain . or .. components")
		}
		if strings.Contains(part, SubjectVar) && part != SubjectVar {
			return errors.New("may use ${subject} only as a whole path component")
		}
		if strings.Contains(strings.ReplaceAll(part, SubjectVar, ""), "${") {
			return errors.New("knows no variable other than ${subject}")
		}
	}
	return nil
}

// Grants returns a copy of the grants (kinds defaulted).
func (p *Policy) Grants() []Grant { return slices.Clone(p.grants) }

// Authorize allows the action when some grant matches the subject, the
// action, the resource kind and, on a path-component boundary, the prefix.
// Anything else is denied.
func (p *Policy) Authorize(_ context.Context, who ports.Principal, action ports.Action, r ports.Resource) ports.Decision {
	if !who.Authenticated || who.Subject == "" {
		return ports.Decision{Reason: "unauthenticated"}
	}
	for i, g := range p.grants {
		if g.Subject != AnySubject && g.Subject != who.Subject {
			continue
		}
		if !slices.Contains(g.Actions, action) || !slices.Contains(g.Kinds, r.Kind) {
			continue
		}
		prefix, ok := expand(g.Prefix, who.Subject)
		if !ok {
			continue
		}
		if matchPrefix(prefix, r.ID, separators(r.Kind)) {
			return ports.Decision{Allowed: true, Reason: fmt.Sprintf("grant %d", i+1)}
		}
	}
	return ports.Decision{Reason: "no grant matches"}
}

// expand substitutes the subject into a prefix. A subject that is not a
// single safe path component (it contains a separator, is "." or "..", or
// holds control characters) never matches a ${subject} grant: it could
// otherwise reach another namespace.
func expand(prefix, subject string) (string, bool) {
	if !strings.Contains(prefix, SubjectVar) {
		return prefix, true
	}
	if subject == "." || subject == ".." || strings.ContainsAny(subject, "/\\") || strings.Contains(subject, SubjectVar) {
		return "", false
	}
	for _, r := range subject {
		if r < 0x20 || r == 0x7f {
			return "", false
		}
	}
	return strings.ReplaceAll(prefix, SubjectVar, subject), true
}

// separators are the characters that end a path component for a kind.
func separators(kind string) string {
	if kind == ports.KindTable {
		return "/."
	}
	return "/"
}

// matchPrefix reports whether id lies under prefix on a component boundary:
// "" matches everything; "notes/" matches "notes/a" but not "notes-evil/a";
// "notes" matches "notes" and "notes/a".
func matchPrefix(prefix, id, seps string) bool {
	if prefix == "" {
		return true
	}
	if !strings.HasPrefix(id, prefix) {
		return false
	}
	if len(id) == len(prefix) || strings.ContainsRune(seps, rune(prefix[len(prefix)-1])) {
		return true
	}
	return strings.ContainsRune(seps, rune(id[len(prefix)]))
}

// AllowAll stands in when authentication is off (stdio): the local operator
// owns the process and everything it can reach.
type AllowAll struct{}

// Authorize implements ports.Authorizer.
func (AllowAll) Authorize(context.Context, ports.Principal, ports.Action, ports.Resource) ports.Decision {
	return ports.Decision{Allowed: true, Reason: "authentication is off"}
}
