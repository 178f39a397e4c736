package authz_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/policies"
	"github.com/arrowhead-go/arrowhead/ports"
)

// onlyKind rebuilds a policy from the grants that name kind, narrowed to
// it: what the policy would decide for kind if no other kind existed.
func onlyKind(t *testing.T, p *authz.Policy, kind string) *authz.Policy {
	t.Helper()
	var grants []authz.Grant
	for _, g := range p.Grants() {
		if slices.Contains(g.Kinds, kind) {
			g.Kinds = []string{kind}
			grants = append(grants, g)
		}
	}
	if grants == nil {
		grants = []authz.Grant{}
	}
	doc, err := json.Marshal(map[string]any{"grants": grants})
	if err != nil {
		t.Fatal(err)
	}
	return mustParse(t, doc)
}

// TestDocumentAndRepoGrantsNeverCross checks, for every shipped policy and
// in both directions, that a grant over corpus documents never decides a
// repository file and a repository grant never decides a document: every
// decision on one kind equals the decision of the policy stripped of every
// grant that does not name that kind.
func TestDocumentAndRepoGrantsNeverCross(t *testing.T) {
	subjects := []string{"alice", "ci-agent", "alice@example.com", "bob@example.com"}
	actions := []ports.Action{ports.ActionRead, ports.ActionSearch, ports.ActionScan, ports.ActionWrite, ports.ActionExecute}
	ids := []string{"", "src/app.py", "docs/guide.md", "alice/notes.md", "scratch/alice/x.md", "reports/q3.md",
		"shared/a.md", "users/alice@example.com/n.md", "teams/payments/q3.md", ".git/config"}
	for _, name := range policies.Names() {
		t.Run(name, func(t *testing.T) {
			p := mustParse(t, policies.Example(name))
			docOnly, repoOnly := onlyKind(t, p, ports.KindDocument), onlyKind(t, p, ports.KindRepoFile)
			for _, s := range subjects {
				who := ports.NewPrincipal(s)
				for _, a := range actions {
					for _, id := range ids {
						repo := ports.Resource{Kind: ports.KindRepoFile, ID: id}
						if got, want := p.Authorize(t.Context(), who, a, repo).Allowed, repoOnly.Authorize(t.Context(), who, a, repo).Allowed; got != want {
							t.Errorf("%s %s repo_file %q = %v, but its repository grants alone say %v", s, a, id, got, want)
						}
						d := doc(id)
						if got, want := p.Authorize(t.Context(), who, a, d).Allowed, docOnly.Authorize(t.Context(), who, a, d).Allowed; got != want {
							t.Errorf("%s %s document %q = %v, but its document grants alone say %v", s, a, id, got, want)
						}
					}
				}
			}
		})
	}
}

// TestShippedRepoGrants pins what each shipped policy grants on the
// repository: read and search where it grants the repository at all, never
// write, scan or execute on code.
func TestShippedRepoGrants(t *testing.T) {
	grantsRepo := map[string]bool{"default.json": true, "coding-agent.json": true, "read-only-analyst.json": true, "team-namespaces.json": false}
	for _, name := range policies.Names() {
		want, known := grantsRepo[name]
		if !known {
			t.Errorf("%s: a shipped policy this test does not know; say whether it grants the repository", name)
			continue
		}
		p := mustParse(t, policies.Example(name))
		who := ports.NewPrincipal("alice")
		src := ports.Resource{Kind: ports.KindRepoFile, ID: "src/app.py"}
		for _, a := range []ports.Action{ports.ActionRead, ports.ActionSearch} {
			if got := p.Authorize(t.Context(), who, a, src).Allowed; got != want {
				t.Errorf("%s: %s on the repository = %v, want %v", name, a, got, want)
			}
		}
		for _, a := range []ports.Action{ports.ActionWrite, ports.ActionScan, ports.ActionExecute, ports.ActionIngest} {
			if p.Authorize(t.Context(), who, a, src).Allowed {
				t.Errorf("%s: %s is granted on code", name, a)
			}
		}
	}
	// A corpus grant covering everything reaches no code, and the reverse.
	docAll := mustParse(t, []byte(`{"grants":[{"subject":"*","actions":["read","search"],"kinds":["document"],"prefix":""}]}`))
	repoAll := mustParse(t, []byte(`{"grants":[{"subject":"*","actions":["read","search"],"kinds":["repo_file"],"prefix":""}]}`))
	kindless := mustParse(t, []byte(`{"grants":[{"subject":"*","actions":["read","search"],"prefix":""}]}`))
	who := ports.NewPrincipal("alice")
	for _, a := range []ports.Action{ports.ActionRead, ports.ActionSearch} {
		if docAll.Authorize(t.Context(), who, a, ports.Resource{Kind: ports.KindRepoFile, ID: "src/a.go"}).Allowed ||
			kindless.Authorize(t.Context(), who, a, ports.Resource{Kind: ports.KindRepoFile, ID: "src/a.go"}).Allowed {
			t.Errorf("a document grant reached code (%s)", a)
		}
		if repoAll.Authorize(t.Context(), who, a, doc("notes/a.md")).Allowed {
			t.Errorf("a repository grant reached a document (%s)", a)
		}
	}
}
