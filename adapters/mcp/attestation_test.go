package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// fixedSigner stands in for the attestation key.
type fixedSigner struct{}

func (fixedSigner) Sign([]byte) (string, error) { return "a.b.c", nil }
func (fixedSigner) KeyID() string               { return "kid-1" }
func (fixedSigner) PublicJWK() []byte {
	return []byte(`{"kty":"OKP","crv":"Ed25519","x":"AA","kid":"kid-1"}`)
}

func attestedApp(t *testing.T) *core.App {
	t.Helper()
	tool := func(name, scope string) catalog.ToolSpec {
		type in struct {
			Text string `json:"text" description:"Text." maxLength:"8"`
		}
		type out struct {
			Text string `json:"text" description:"Text."`
		}
		return catalog.Define[in, out](catalog.ToolDef{Name: name, Family: catalog.FamilyCore, Scope: scope,
			Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 10},
			Description: "x. Example: " + name + "()"}).
			Bind(func(context.Context, catalog.Call, in) (*catalog.Reply[out], error) { return nil, nil })
	}
	d := coretest.Deps(settings.Defaults(), portstest.AllowAll{}, coretest.Tools(tool("calculate", "tools:read"), tool("doc_read", "docs:read")))
	d.Signer = fixedSigner{}
	app, err := core.New(d)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// listDigest sends tools/list (legacy: no _meta; modern: the 2026-07-28
// _meta) and returns the result's _meta.
func listMeta(t *testing.T, s *Server, modern bool) map[string]any {
	t.Helper()
	params := `{}`
	if modern {
		params = `{"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"2026-07-28","` + mcp.MetaKeyClientCapabilities + `":{},"` +
			mcp.MetaKeyClientInfo + `":{"name":"t","version":"1"}}}`
	}
	resp := s.MCPServer().HandleMessage(t.Context(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":`+params+`}`))
	raw, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Result struct {
			Meta  map[string]any `json:"_meta"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Result.Meta == nil {
		t.Fatalf("tools/list answered %s", raw)
	}
	return body.Result.Meta
}

func TestToolsListCarriesTheCallersManifestDigest(t *testing.T) {
	app := attestedApp(t)
	alice := ports.NewPrincipal("alice", "tools:read")
	bob := ports.NewPrincipal("bob", "tools:read", "docs:read")
	for _, p := range []ports.Principal{alice, bob} {
		s := New(app, Options{Name: "t", Version: "1", Principal: func(context.Context) ports.Principal { return p }})
		for _, modern := range []bool{false, true} {
			meta := listMeta(t, s, modern)
			entry, _ := meta[AttestationMetaKey].(map[string]any)
			if entry["digest"] != app.ManifestDigest(p) || entry["algorithm"] != "sha256" || entry["uri"] != core.AttestationURI {
				t.Fatalf("%s modern=%v: _meta %v", p.Subject, modern, meta)
			}
			if _, ok := meta["io.modelcontextprotocol/serverInfo"]; modern && !ok {
				t.Fatalf("the modern era's own _meta was lost: %v", meta)
			}
		}
	}
	if app.ManifestDigest(alice) == app.ManifestDigest(bob) {
		t.Fatal("different surfaces, one digest")
	}
}

func TestAttestationKeyIsPublicOverHTTP(t *testing.T) {
	app := attestedApp(t)
	s := New(app, Options{Name: "t", Version: "1"})
	addr := serveHTTP(t, s, HTTPOptions{Auth: tokenAuth})
	resp, err := http.Get("http://" + addr + AttestationKeyPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/jwk-set+json" ||
		string(body) != string(app.AttestationKeySet()) {
		t.Fatalf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	// The endpoint itself stays behind the token.
	if r := post(t, addr, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, ""); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/mcp without a token: %d", r.StatusCode)
	}
}
