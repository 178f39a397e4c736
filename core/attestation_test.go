package core_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// countingSigner stands in for the Ed25519 key and counts signatures; its
// "signature" names the payload's digest so a test can tell which manifest
// was signed.
type countingSigner struct{ n atomic.Int64 }

func (c *countingSigner) Sign(payload []byte) (string, error) {
	c.n.Add(1)
	sum := sha256.Sum256(payload)
	return "signed." + hex.EncodeToString(sum[:]), nil
}
func (c *countingSigner) KeyID() string { return "test-kid" }
func (c *countingSigner) PublicJWK() []byte {
	return []byte(`{"kty":"OKP","crv":"Ed25519","x":"AA","kid":"test-kid"}`)
}

type wideInput struct {
	Text string `json:"text" description:"Text." maxLength:"4096"`
}

type docsInput struct {
	Path string `json:"path" description:"Path." maxLength:"256"`
}

func textTool[In any](name, scope, description string) catalog.ToolSpec {
	return catalog.Define[In, echoOutput](catalog.ToolDef{
		Name:        name,
		Family:      catalog.FamilyCore,
		Scope:       scope,
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 120},
		Description: description,
	}).Bind(func(context.Context, catalog.Call, In) (*catalog.Reply[echoOutput], error) {
		return catalog.Answer(echoOutput{Text: "ok"}, "ok"), nil
	})
}

func attestedApp(t testing.TB, signer ports.Signer, tools ...catalog.ToolSpec) *core.App {
	t.Helper()
	d := coretest.Deps(coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "core"}), portstest.AllowAll{}, coretest.Tools(tools...))
	d.Signer = signer
	d.Version = "1.2.3-test"
	app, err := core.New(d)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func baseTools() []catalog.ToolSpec {
	return []catalog.ToolSpec{
		textTool[echoInput]("echo", "tools:read", "Echo text. Example: echo(text=\"hi\")"),
		textTool[docsInput]("doc_peek", "docs:read", "Peek at a document. Example: doc_peek(path=\"a.md\")"),
	}
}

func manifestOf(t *testing.T, app *core.App, p ports.Principal) core.Manifest {
	t.Helper()
	raw, _ := app.Manifest(p)
	m, err := core.ManifestOf(raw)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func toolNames(m core.Manifest) []string {
	var out []string
	for _, t := range m.Tools {
		out = append(out, t.Name)
	}
	return out
}

func TestManifestDiffersPerCallerAsTheirSurfaceDoes(t *testing.T) {
	signer := &countingSigner{}
	app := attestedApp(t, signer, baseTools()...)
	alice := ports.NewPrincipal("alice", "tools:read")
	carol := ports.NewPrincipal("carol", "tools:read")
	bob := ports.NewPrincipal("bob", "tools:read", "docs:read")

	ma, mb := manifestOf(t, app, alice), manifestOf(t, app, bob)
	if got := strings.Join(toolNames(ma), ","); got != "echo" {
		t.Fatalf("alice's manifest lists %q", got)
	}
	if got := strings.Join(toolNames(mb), ","); got != "doc_peek,echo" {
		t.Fatalf("bob's manifest lists %q", got)
	}
	// Exactly as the listing: every tool the caller's tools/list returns,
	// nothing else.
	for _, p := range []ports.Principal{alice, bob} {
		var listed []string
		for _, tool := range app.ListTools(t.Context(), p) {
			listed = append(listed, tool.Spec.Name())
		}
		if got, want := strings.Join(toolNames(manifestOf(t, app, p)), ","), strings.Join(listed, ","); got != want {
			t.Fatalf("%s: manifest %q, tools/list %q", p.Subject, got, want)
		}
	}
	if app.ManifestDigest(alice) == app.ManifestDigest(bob) {
		t.Fatal("different surfaces share a digest")
	}
	changes := core.DiffManifests(ma, mb)
	if len(changes) != 1 || changes[0].String() != "tool doc_peek: added" {
		t.Fatalf("diff alice -> bob: %v", changes)
	}

	// Equal surfaces, different callers: byte-equal manifests, one
	// signature between them.
	rawA, _ := app.Manifest(alice)
	rawC, _ := app.Manifest(carol)
	if !bytes.Equal(rawA, rawC) {
		t.Fatal("equal surfaces gave different manifests")
	}
	attA, err := app.Attest(alice)
	if err != nil {
		t.Fatal(err)
	}
	attC, err := app.Attest(carol)
	if err != nil {
		t.Fatal(err)
	}
	if attA != attC || signer.n.Load() != 1 {
		t.Fatalf("equal surfaces: %+v vs %+v after %d signatures", attA, attC, signer.n.Load())
	}

	// The anonymous caller sees nothing, and its manifest says so.
	if n := len(manifestOf(t, app, ports.Anonymous()).Tools); n != 0 {
		t.Fatalf("anonymous manifest lists %d tools", n)
	}
}

func TestManifestIsCanonical(t *testing.T) {
	p := ports.NewPrincipal("alice", "tools:read", "docs:read")
	one := attestedApp(t, &countingSigner{}, baseTools()...)
	two := attestedApp(t, &countingSigner{}, baseTools()...)
	raw1, digest1 := one.Manifest(p)
	raw2, digest2 := two.Manifest(p)
	if !bytes.Equal(raw1, raw2) || digest1 != digest2 {
		t.Fatal("two apps with one surface gave different manifests")
	}
	again, err := core.Canonicalize(raw1)
	if err != nil || !bytes.Equal(again, raw1) {
		t.Fatalf("the manifest is not in canonical form: %v", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw1); err != nil || !bytes.Equal(compact.Bytes(), raw1) {
		t.Fatal("the manifest carries insignificant whitespace")
	}
	sum := sha256.Sum256(raw1)
	if digest1 != hex.EncodeToString(sum[:]) {
		t.Fatal("the digest is not the manifest's SHA-256")
	}
	m := manifestOf(t, one, p)
	if m.Server.Version != "1.2.3-test" || m.Server.Build.GoVersion == "" {
		t.Fatalf("server block: %+v", m.Server)
	}
	echo := m.Tools[1]
	if echo.Name != "echo" || echo.Scope != "tools:read" || echo.PerMinute != 120 ||
		!strings.Contains(string(echo.InputSchema), `"maxLength":64`) || echo.Annotations == nil {
		t.Fatalf("tool entry: %+v", echo)
	}
	var uris []string
	for _, r := range m.Resources {
		uris = append(uris, r.URI)
	}
	if got := strings.Join(uris, " "); got != "arrowhead://attestation arrowhead://attestation/key arrowhead://integrity" {
		t.Fatalf("resources: %s", got)
	}
}

func TestPinnedManifestDetectsChanges(t *testing.T) {
	p := ports.NewPrincipal("alice", "tools:read", "docs:read")
	pinned := manifestOf(t, attestedApp(t, &countingSigner{}, baseTools()...), p)
	cases := []struct {
		name  string
		tools []catalog.ToolSpec
		want  []string
	}{
		{"description", []catalog.ToolSpec{
			textTool[echoInput]("echo", "tools:read", "Echo text, and also send it elsewhere. Example: echo(text=\"hi\")"),
			baseTools()[1],
		}, []string{"tool echo: changed description"}},
		{"widened schema", []catalog.ToolSpec{
			textTool[wideInput]("echo", "tools:read", "Echo text. Example: echo(text=\"hi\")"),
			baseTools()[1],
		}, []string{"tool echo: changed inputSchema.properties.text.maxLength (64 -> 4096, widened)"}},
		{"added tool", append(baseTools(),
			textTool[echoInput]("exfiltrate", "tools:read", "Send text away. Example: exfiltrate(text=\"hi\")"),
		), []string{"tool exfiltrate: added"}},
		{"scope", []catalog.ToolSpec{
			textTool[echoInput]("echo", "docs:read", "Echo text. Example: echo(text=\"hi\")"),
			baseTools()[1],
		}, []string{"tool echo: changed scope"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := attestedApp(t, &countingSigner{}, tc.tools...)
			var got []string
			for _, c := range core.DiffManifests(pinned, manifestOf(t, app, p)) {
				got = append(got, c.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestSignsOncePerSurface(t *testing.T) {
	signer := &countingSigner{}
	app := attestedApp(t, signer, baseTools()...)
	p := ports.NewPrincipal("alice", "tools:read", "docs:read")
	for range 50 {
		_ = app.ManifestDigest(p) // what every tools/list computes: never signs
	}
	if n := signer.n.Load(); n != 0 {
		t.Fatalf("the digest signed %d times", n)
	}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			caller := ports.NewPrincipal("caller"+strconv.Itoa(i), "tools:read", "docs:read")
			if _, err := app.ReadResource(context.Background(), caller, core.AttestationURI); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := signer.n.Load(); n != 1 {
		t.Fatalf("32 reads of one surface signed %d times", n)
	}
	before := app.ManifestDigest(p)
	app.SetDisabled([]string{"doc_peek"})
	after := app.ManifestDigest(p)
	if before == after {
		t.Fatal("the kill switch did not change the digest")
	}
	att, err := app.Attest(p)
	if err != nil {
		t.Fatal(err)
	}
	if att.Digest != after || signer.n.Load() != 2 {
		t.Fatalf("after the kill switch: %+v, %d signatures", att, signer.n.Load())
	}
	app.SetDisabled(nil)
	if _, err := app.Attest(p); err != nil || signer.n.Load() != 2 {
		t.Fatalf("back to the first surface signed again: %d signatures", signer.n.Load())
	}
}

func TestAttestationResources(t *testing.T) {
	app := attestedApp(t, &countingSigner{}, baseTools()...)
	p := ports.NewPrincipal("alice", "tools:read")
	got, err := app.ReadResource(t.Context(), p, core.AttestationURI)
	if err != nil {
		t.Fatal(err)
	}
	var att core.Attestation
	if err := json.Unmarshal([]byte(got[0].Text), &att); err != nil {
		t.Fatal(err)
	}
	if att.Format != core.AttestationFormat || att.Algorithm != "sha256" || att.KeyID != "test-kid" ||
		att.Digest != app.ManifestDigest(p) || att.JWS != "signed."+att.Digest {
		t.Fatalf("attestation: %+v", att)
	}
	key, err := app.ReadResource(t.Context(), p, core.AttestationKeyURI)
	if err != nil || !strings.HasPrefix(key[0].Text, `{"keys":[{"kty":"OKP"`) {
		t.Fatalf("key resource: %v %+v", err, key)
	}
	// Guarded like every resource: the anonymous caller gets the answer
	// the integrity resource gives it.
	_, want := app.ReadResource(t.Context(), ports.Anonymous(), core.IntegrityURI)
	for _, uri := range []string{core.AttestationURI, core.AttestationKeyURI} {
		_, err := app.ReadResource(t.Context(), ports.Anonymous(), uri)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Fatalf("anonymous read of %s: %v (integrity: %v)", uri, err, want)
		}
	}
	app.SetDisabled([]string{core.AttestationURI})
	if _, err := app.ReadResource(t.Context(), p, core.AttestationURI); err == nil {
		t.Fatal("the kill switch does not reach the attestation resource")
	}
}

func TestNoSignerServesNoAttestation(t *testing.T) {
	app := attestedApp(t, nil, baseTools()...)
	p := ports.NewPrincipal("alice", "tools:read")
	if _, err := app.Attest(p); !errors.Is(err, core.ErrNoSigner) {
		t.Fatalf("Attest without a signer: %v", err)
	}
	if app.AttestationKeySet() != nil {
		t.Fatal("a key set without a key")
	}
	_, err := app.ReadResource(t.Context(), p, core.AttestationURI)
	if te, _ := catalog.AsToolError(err); te == nil || te.Kind != catalog.KindUnknown {
		t.Fatalf("attestation resource without a signer: %v", err)
	}
	if app.ManifestDigest(p) == "" {
		t.Fatal("the unsigned digest is still served")
	}
}

func BenchmarkManifestDigest(b *testing.B) {
	app := attestedApp(b, &countingSigner{}, baseTools()...)
	p := ports.NewPrincipal("alice", "tools:read", "docs:read")
	_ = app.ManifestDigest(p)
	b.ReportAllocs()
	for b.Loop() {
		_ = app.ManifestDigest(p)
	}
}
