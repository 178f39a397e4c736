package authz_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/policies"
	"github.com/arrowhead-go/arrowhead/ports"
)

func mustParse(t *testing.T, b []byte) *authz.Policy {
	t.Helper()
	p, err := authz.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func doc(id string) ports.Resource { return ports.Resource{Kind: ports.KindDocument, ID: id} }

func TestDefaultPolicy(t *testing.T) {
	p := mustParse(t, policies.Default())
	alice := ports.NewPrincipal("alice", "docs:write")
	cases := []struct {
		who    ports.Principal
		action ports.Action
		res    ports.Resource
		want   bool
	}{
		{alice, ports.ActionRead, doc("notes/a.md"), true},
		{alice, ports.ActionSearch, doc(""), true},
		{alice, ports.ActionScan, doc("exports/"), true},
		{alice, ports.ActionWrite, doc("alice/todo.md"), true},
		{alice, ports.ActionWrite, doc("alice/deep/x.json"), true},
		{alice, ports.ActionWrite, doc("bob/todo.md"), false},
		{alice, ports.ActionWrite, doc("alice-evil/todo.md"), false},
		{alice, ports.ActionWrite, doc("alice"), false},
		{alice, ports.ActionWrite, doc("todo.md"), false},
		{alice, ports.ActionRead, ports.Resource{Kind: ports.KindMemory, ID: "ns"}, true},
		{alice, ports.ActionWrite, ports.Resource{Kind: ports.KindKV, ID: "k"}, true},
		{alice, ports.ActionRead, ports.Resource{Kind: ports.KindRepoFile, ID: "src/a.go"}, true},
		{alice, ports.ActionWrite, ports.Resource{Kind: ports.KindRepoFile, ID: "src/a.go"}, false},
		{alice, ports.ActionExecute, ports.Resource{Kind: ports.KindSandbox}, false},
		{alice, ports.ActionNotify, ports.Resource{Kind: ports.KindWebhook, ID: "https://x"}, false},
		{alice, ports.ActionIngest, ports.Resource{Kind: ports.KindTable, ID: "doc_chunks"}, false},
		{alice, ports.ActionQuery, ports.Resource{Kind: ports.KindTableless}, false},
		{alice, ports.ActionQuery, ports.Resource{Kind: ports.KindTable, ID: "users"}, false},
		{ports.Anonymous(), ports.ActionRead, doc("notes/a.md"), false},
		{ports.NewPrincipal("../bob"), ports.ActionWrite, doc("bob/x.md"), false},
		{ports.NewPrincipal("a/b"), ports.ActionWrite, doc("a/b/x.md"), false},
	}
	for _, c := range cases {
		got := p.Authorize(t.Context(), c.who, c.action, c.res).Allowed
		if got != c.want {
			t.Errorf("%s %s %s:%s = %v, want %v", c.who.Subject, c.action, c.res.Kind, c.res.ID, got, c.want)
		}
	}
}

func TestPrefixBoundaries(t *testing.T) {
	p := mustParse(t, []byte(`{"grants":[
		{"subject":"*","actions":["read"],"prefix":"notes/"},
		{"subject":"*","actions":["search"],"prefix":"notes"},
		{"subject":"*","actions":["query"],"kinds":["table"],"prefix":"doc_chunks"}]}`))
	who := ports.NewPrincipal("u")
	check := func(a ports.Action, r ports.Resource, want bool) {
		t.Helper()
		if got := p.Authorize(t.Context(), who, a, r).Allowed; got != want {
			t.Errorf("%s %+v = %v", a, r, got)
		}
	}
	check(ports.ActionRead, doc("notes/a.md"), true)
	check(ports.ActionRead, doc("notes-evil/a.md"), false)
	check(ports.ActionRead, doc("notes"), false)
	check(ports.ActionSearch, doc("notes"), true)
	check(ports.ActionSearch, doc("notes/x"), true)
	check(ports.ActionSearch, doc("notesx"), false)
	check(ports.ActionQuery, ports.Resource{Kind: ports.KindTable, ID: "doc_chunks"}, true)
	check(ports.ActionQuery, ports.Resource{Kind: ports.KindTable, ID: "doc_chunks_secret"}, false)
	// A kind-less grant covers documents only.
	check(ports.ActionRead, ports.Resource{Kind: ports.KindMemory, ID: "notes/a"}, false)
}

func TestShippedPoliciesParse(t *testing.T) {
	names := policies.Names()
	if len(names) < 4 {
		t.Fatalf("expected the default and three examples, got %v", names)
	}
	for _, n := range names {
		if _, err := authz.Parse(policies.Example(n)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	team := mustParse(t, policies.Example("team-namespaces.json"))
	alice := ports.NewPrincipal("alice@example.com")
	if !team.Authorize(t.Context(), alice, ports.ActionWrite, doc("teams/payments/q3.md")).Allowed ||
		team.Authorize(t.Context(), alice, ports.ActionWrite, doc("teams/search/q3.md")).Allowed ||
		!team.Authorize(t.Context(), alice, ports.ActionWrite, doc("users/alice@example.com/n.md")).Allowed {
		t.Error("team-namespaces example does not behave as documented")
	}
}

func TestParseRefusals(t *testing.T) {
	bad := map[string]string{
		"not json":        `{grants`,
		"no grants":       `{}`,
		"unknown field":   `{"grants":[{"subject":"*","actions":["read"],"prefix":"","admin":true}]}`,
		"unknown action":  `{"grants":[{"subject":"*","actions":["delete"],"prefix":""}]}`,
		"unknown kind":    `{"grants":[{"subject":"*","actions":["read"],"kinds":["files"],"prefix":""}]}`,
		"empty actions":   `{"grants":[{"subject":"*","actions":[],"prefix":""}]}`,
		"empty subject":   `{"grants":[{"subject":"","actions":["read"],"prefix":""}]}`,
		"parent prefix":   `{"grants":[{"subject":"*","actions":["read"],"prefix":"../"}]}`,
		"absolute prefix": `{"grants":[{"subject":"*","actions":["read"],"prefix":"/etc"}]}`,
		"partial var":     `{"grants":[{"subject":"*","actions":["write"],"prefix":"u-${subject}/"}]}`,
		"other var":       `{"grants":[{"subject":"*","actions":["write"],"prefix":"${team}/"}]}`,
		"trailing":        `{"grants":[]} {}`,
		"huge":            `{"grants":[` + strings.Repeat(`{"subject":"*","actions":["read"],"prefix":""},`, 1001) + `{"subject":"*","actions":["read"],"prefix":""}]}`,
	}
	for name, in := range bad {
		if _, err := authz.Parse([]byte(in)); !errors.Is(err, authz.ErrInvalidPolicy) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}
