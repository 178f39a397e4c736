package security_test

import (
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/security/securitytest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/assist"
	"github.com/arrowhead-go/arrowhead/core/tools/coretools"
	"github.com/arrowhead-go/arrowhead/core/tools/docs"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// noStore is a corpus doc_retrieve never reads.
type noStore struct{ ports.DocumentStore }

// TestFetchedAndSampledContentRedacted covers the fetch paths (safe_fetch,
// doc_retrieve: a page holding the planted secrets, served by a fake
// egress) and a sampling request (the content the server asks the client's
// own model to read): none carries a raw value; with
// ARROWHEAD_REDACT_READS=false the fetched page comes back raw and the
// sampling request stays redacted.
func TestFetchedAndSampledContentRedacted(t *testing.T) {
	corpus := securitytest.Corpus()
	page := securitytest.File(corpus)
	var leaks leakSet
	for _, p := range corpus {
		leaks.add(p.Name, securitytest.Fragments(p)...)
	}
	for _, redactReads := range []bool{true, false} {
		s := settings.Defaults()
		s.RedactReads = redactReads
		s.LLMProvider = assist.ProviderSampling
		// The page goes back out through summarize_diff on purpose: the
		// model request's redaction must hold without the egress guard,
		// which would hold the call (its own tests cover that).
		s.EgressGuard = "off"
		scanner := security.NewRandomScanner()
		for _, ct := range []string{"text/plain", "text/markdown"} {
			eg := &portstest.Egress{Response: ports.FetchResponse{Status: 200, ContentType: ct, Body: []byte(page), FinalURL: "https://pages.example/config"}}
			deps := coretest.Deps(s, portstest.AllowAll{},
				coretools.Family.With(coretools.Ports{Egress: eg, Sandbox: &portstest.FileJail{}}),
				docs.Family.With(docs.Ports{Store: noStore{}, Egress: eg, Authorizer: portstest.AllowAll{}, Scanner: scanner}),
				assist.Family.With(assist.Ports{Authorizer: portstest.AllowAll{}, Scanner: scanner}))
			deps.Scanner = scanner
			app, err := core.New(deps)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range []string{"safe_fetch", "doc_retrieve"} {
				res, te := coretest.Call(t, app, ports.Operator(), tool, map[string]any{"url": "https://pages.example/config"})
				if te != nil {
					t.Fatalf("%s: %s", tool, te.Message)
				}
				out := strs(res.Structured(), []string{res.Text})
				switch {
				case redactReads:
					if !strings.Contains(res.Text, "[REDACTED:") {
						t.Errorf("%s %s: nothing redacted", tool, ct)
					}
					leaks.check(t, tool+" "+ct, out)
				case !strings.Contains(strings.Join(out, "\n"), corpus[17].Value):
					t.Errorf("%s %s: redacted with ARROWHEAD_REDACT_READS=false", tool, ct)
				}
			}
			res, te := coretest.Call(t, app, ports.Operator(), "summarize_diff", map[string]any{"diff": "+" + strings.ReplaceAll(page, "\n", "\n+")},
				core.WithClientCaps(catalog.ClientCaps{Sampling: true}))
			if te != nil || res.NeedInput == nil || res.NeedInput.Sample == nil {
				t.Fatalf("summarize_diff did not ask the client's model: %v %+v", te, res)
			}
			sample := res.NeedInput.Sample
			if !strings.Contains(sample.Prompt, "[REDACTED:") {
				t.Error("the sampling request carries no placeholder")
			}
			leaks.check(t, "sampling request", []string{sample.System, sample.Prompt})
		}
	}
}
