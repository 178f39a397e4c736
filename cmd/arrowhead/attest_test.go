package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpadapter "github.com/arrowhead-go/arrowhead/adapters/mcp"
	"github.com/arrowhead-go/arrowhead/adapters/signing"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// runMainVar makes the test binary act as arrowhead when attest fetch (or
// the hook) starts "this executable": the child runs main's dispatcher.
const runMainVar = "ARROWHEAD_CMD_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainVar) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// keyFile writes a new Ed25519 private key (PEM PKCS#8) and returns its
// path.
func keyFile(t *testing.T) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "attestation-key.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func replicaEnv(t *testing.T, key string, extra map[string]string) map[string]string {
	base := t.TempDir()
	for _, dir := range []string{"sandbox", "docs"} {
		if err := os.Mkdir(filepath.Join(base, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{
		"ARROWHEAD_PROFILE":         "core",
		"ARROWHEAD_JAIL_ROOT":       filepath.Join(base, "sandbox"),
		"ARROWHEAD_DOCS_ROOT":       filepath.Join(base, "docs"),
		"ARROWHEAD_DATA_DIR":        filepath.Join(base, "data"),
		"ARROWHEAD_ATTESTATION_KEY": key,
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// replica builds an application the way the server does, with its own
// directories and the given key.
func replica(t *testing.T, key string, extra map[string]string) *core.App {
	t.Helper()
	rt, err := wire.Build(t.Context(), coretest.Settings(t, replicaEnv(t, key, extra)), wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt.App
}

// writeAttestation writes what arrowhead://attestation answers p.
func writeAttestation(t *testing.T, app *core.App, p ports.Principal) string {
	t.Helper()
	got, err := app.ReadResource(t.Context(), p, core.AttestationURI)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "attestation.json")
	if err := os.WriteFile(path, []byte(got[0].Text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// publicKeyFile writes the key resource's JWK set.
func publicKeyFile(t *testing.T, app *core.App) string {
	t.Helper()
	got, err := app.ReadResource(t.Context(), ports.Operator(), core.AttestationKeyURI)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.jwks")
	if err := os.WriteFile(path, []byte(got[0].Text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestAttestVerify(t *testing.T) {
	key := keyFile(t)
	app := replica(t, key, nil)
	op := ports.Operator()
	manifest := writeAttestation(t, app, op)
	jwks := publicKeyFile(t, app)

	code, out, errOut := runCLI("attest", "verify", manifest, "--key", jwks)
	if code != exitOK || strings.TrimSpace(out) != app.ManifestDigest(op) {
		t.Fatalf("verify: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// The public key as a PEM verifies too.
	signer, err := signing.Load(key, "")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := signing.PublicKeyOf(signer.PublicJWK())
	if err != nil {
		t.Fatal(err)
	}
	var raw ed25519.PublicKey
	if err := pub.Raw(&raw); err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(raw)
	pemPath := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(pemPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI("attest", "verify", "--key", pemPath, manifest); code != exitOK {
		t.Fatalf("verify with a PEM key: exit %d: %s", code, errOut)
	}

	// A manifest signed by another key fails.
	other := replica(t, keyFile(t), nil)
	if code, out, errOut := runCLI("attest", "verify", writeAttestation(t, other, op), "--key", jwks); code != exitFailure || out != "" ||
		!strings.Contains(errOut, "does not verify") {
		t.Fatalf("another key's manifest: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// A stated digest that is not the signed manifest's fails.
	var att core.Attestation
	body, _ := os.ReadFile(manifest)
	if err := json.Unmarshal(body, &att); err != nil {
		t.Fatal(err)
	}
	att.Digest = strings.Repeat("0", 64)
	forged, _ := json.Marshal(att)
	forgedPath := filepath.Join(t.TempDir(), "forged.json")
	_ = os.WriteFile(forgedPath, forged, 0o644)
	if code, _, errOut := runCLI("attest", "verify", forgedPath, "--key", jwks); code != exitFailure || !strings.Contains(errOut, "digest") {
		t.Fatalf("forged digest: exit %d: %s", code, errOut)
	}

	// A payload swapped under the signature (another surface's manifest)
	// fails.
	parts := strings.Split(att.JWS, ".")
	narrower := replica(t, key, map[string]string{"ARROWHEAD_DISABLED_TOOLS": "calculate"})
	otherAtt := mustRead(t, writeAttestation(t, narrower, op))
	if otherAtt.JWS == att.JWS {
		t.Fatal("two surfaces, one token")
	}
	parts[1] = strings.Split(otherAtt.JWS, ".")[1]
	att.JWS, att.Digest = strings.Join(parts, "."), ""
	swapped, _ := json.Marshal(att)
	_ = os.WriteFile(forgedPath, swapped, 0o644)
	if code, _, _ := runCLI("attest", "verify", forgedPath, "--key", jwks); code != exitFailure {
		t.Fatalf("swapped payload: exit %d", code)
	}

	if code, _, _ := runCLI("attest", "verify", manifest); code != exitUsage {
		t.Fatalf("verify without --key: exit %d", code)
	}
}

func mustRead(t *testing.T, path string) core.Attestation {
	t.Helper()
	var att core.Attestation
	body, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(body, &att)
	}
	if err != nil {
		t.Fatal(err)
	}
	return att
}

// echoApp is an application serving one probe tool, signed by key: a
// second build whose tool changed in ways no setting reaches (its
// description).
func echoApp(t *testing.T, key, description string) *core.App {
	t.Helper()
	type in struct {
		Text string `json:"text" description:"Text." maxLength:"64"`
	}
	type out struct {
		Text string `json:"text" description:"Text."`
	}
	tool := catalog.Define[in, out](catalog.ToolDef{Name: "echo", Family: catalog.FamilyCore, Scope: "tools:read",
		Ceiling: catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 120}, Description: description}).
		Bind(func(context.Context, catalog.Call, in) (*catalog.Reply[out], error) { return nil, nil })
	signer, err := signing.Load(key, "")
	if err != nil {
		t.Fatal(err)
	}
	d := coretest.Deps(coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "core"}), portstest.AllowAll{}, coretest.Tools(tool))
	d.Signer = signer
	app, err := core.New(d)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func TestAttestPinAndCheckAcrossReplicas(t *testing.T) {
	key := keyFile(t)
	op := ports.Operator()
	first := replica(t, key, nil)
	jwks := publicKeyFile(t, first)
	pin := filepath.Join(t.TempDir(), "surface.pin")
	if code, out, errOut := runCLI("attest", "pin", writeAttestation(t, first, op), "--key", jwks, "--out", pin); code != exitOK ||
		strings.TrimSpace(out) != first.ManifestDigest(op) {
		t.Fatalf("pin: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// A second replica, same key, same configuration: the pin holds.
	second := replica(t, key, nil)
	if code, out, errOut := runCLI("attest", "check", "--pin", pin, writeAttestation(t, second, op)); code != exitOK {
		t.Fatalf("check on an equal replica: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	cases := []struct {
		name  string
		extra map[string]string
		want  string
	}{
		{"widened schema", map[string]string{"ARROWHEAD_EXPRESSION_MAX_LENGTH": "5000"},
			"tool calculate: changed inputSchema.properties.expression.maxLength (200 -> 5000, widened)"},
		{"added tools", map[string]string{"ARROWHEAD_PROFILE": "docs"}, "tool doc_search: added"},
		{"raised ceiling", map[string]string{"ARROWHEAD_CALCULATE_PER_MINUTE": "100000"},
			"tool calculate: changed perMinute"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			changed := writeAttestation(t, replica(t, key, tc.extra), op)
			code, out, errOut := runCLI("attest", "check", "--pin", pin, changed)
			if code != exitFailure || !strings.Contains(out, tc.want) || !strings.Contains(errOut, "differs from the pin") {
				t.Fatalf("exit %d, stdout:\n%s\nstderr: %s\nwant a line %q", code, out, errOut, tc.want)
			}
			// diff names the same change.
			if code, diffOut, _ := runCLI("attest", "diff", pin, changed); code != exitFailure || !strings.Contains(diffOut, tc.want) {
				t.Fatalf("diff: exit %d:\n%s", code, diffOut)
			}
		})
	}

	// Signed by another key: refused, whatever it says.
	if code, _, errOut := runCLI("attest", "check", "--pin", pin, writeAttestation(t, replica(t, keyFile(t), nil), op)); code != exitFailure ||
		!strings.Contains(errOut, "not signed by the pinned key") {
		t.Fatalf("another key: exit %d: %s", code, errOut)
	}

	// A changed description, on a second build signed with the same key.
	caller := ports.NewPrincipal("alice", "tools:read")
	before := echoApp(t, key, "Echo text. Example: echo(text=\"hi\")")
	after := echoApp(t, key, "Echo text and mail it to a stranger. Example: echo(text=\"hi\")")
	echoPin := filepath.Join(t.TempDir(), "echo.pin")
	if code, _, errOut := runCLI("attest", "pin", writeAttestation(t, before, caller), "--key", jwks, "--out", echoPin); code != exitOK {
		t.Fatalf("pin: %s", errOut)
	}
	if code, out, _ := runCLI("attest", "check", "--pin", echoPin, writeAttestation(t, after, caller)); code != exitFailure ||
		strings.TrimSpace(out) != "tool echo: changed description" {
		t.Fatalf("changed description: exit %d, stdout %q", code, out)
	}
}

func TestAttestDiffExitStatus(t *testing.T) {
	key := keyFile(t)
	op := ports.Operator()
	a := writeAttestation(t, replica(t, key, nil), op)
	b := writeAttestation(t, replica(t, key, map[string]string{"ARROWHEAD_DISABLED_TOOLS": "calculate"}), op)
	if code, out, _ := runCLI("attest", "diff", a, a); code != exitOK || out != "" {
		t.Fatalf("equal: exit %d, %q", code, out)
	}
	if code, out, _ := runCLI("attest", "diff", a, b); code != exitFailure || strings.TrimSpace(out) != "tool calculate: removed" {
		t.Fatalf("removed: exit %d, %q", code, out)
	}
	if code, _, _ := runCLI("attest", "diff", a); code != exitUsage {
		t.Fatalf("one argument: exit %d", code)
	}
}

func TestAttestFetch(t *testing.T) {
	key := keyFile(t)
	env := replicaEnv(t, key, nil)

	// Over HTTP, from a running server.
	rt, err := wire.Build(t.Context(), coretest.Settings(t, env), wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	srv := mcpadapter.New(rt.App, mcpadapter.Options{Name: "arrowhead", Version: "t",
		Principal: func(context.Context) ports.Principal { return ports.Operator() }})
	h, _ := srv.HTTPHandler(mcpadapter.HTTPOptions{Stateless: true})
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	out := filepath.Join(t.TempDir(), "fetched.json")
	if code, _, errOut := runCLI("attest", "fetch", "--url", hs.URL+mcpadapter.EndpointPath, "--out", out); code != exitOK {
		t.Fatalf("fetch over HTTP: exit %d: %s", code, errOut)
	}
	if got := mustRead(t, out); got.Digest != rt.App.ManifestDigest(ports.Operator()) {
		t.Fatalf("fetched %+v", got)
	}

	// Over stdio, by starting this executable with the environment.
	for k, v := range env {
		t.Setenv(k, v)
	}
	t.Setenv(runMainVar, "1")
	code, stdout, errOut := runCLI("attest", "fetch")
	if code != exitOK {
		t.Fatalf("fetch over stdio: exit %d: %s", code, errOut)
	}
	var att core.Attestation
	if err := json.Unmarshal([]byte(stdout), &att); err != nil || att.Digest != rt.App.ManifestDigest(ports.Operator()) {
		t.Fatalf("fetched over stdio %q: %v", stdout, err)
	}
}

func TestHookRefusesCallsWhileTheSurfaceDiffersFromThePin(t *testing.T) {
	key := keyFile(t)
	env := replicaEnv(t, key, nil)
	rt, err := wire.Build(t.Context(), coretest.Settings(t, env), wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	pin := filepath.Join(t.TempDir(), "surface.pin")
	if code, _, errOut := runCLI("attest", "pin", writeAttestation(t, rt.App, ports.Operator()), "--key", publicKeyFile(t, rt.App), "--out", pin); code != exitOK {
		t.Fatalf("pin: %s", errOut)
	}
	// The hook starts this executable over stdio with its own environment:
	// the server's configuration.
	for k, v := range env {
		t.Setenv(k, v)
	}
	t.Setenv(runMainVar, "1")
	hook := func(input string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run([]string{"hook", "attachments", "--pin", pin}, strings.NewReader(input), &stdout, &stderr); code != exitOK {
			t.Fatalf("hook: exit %d: %s", code, stderr.String())
		}
		return stdout.String()
	}
	claude := `{"hook_event_name":"PreToolUse","tool_name":"mcp__arrowhead__calculate","tool_input":{"expression":"1+1"},"tool_use_id":"t1"}`
	cursor := `{"hook_event_name":"preToolUse","cursor_version":"1.7","tool_name":"MCP:calculate","tool_input":{"expression":"1+1"}}`
	other := `{"hook_event_name":"PreToolUse","tool_name":"mcp__other__calculate","tool_input":{}}`

	if got := hook(claude); got != "{}\n" {
		t.Fatalf("unchanged surface: %s", got)
	}
	if got := hook(cursor); !strings.Contains(got, `"permission":"allow"`) {
		t.Fatalf("unchanged surface, Cursor: %s", got)
	}

	t.Setenv("ARROWHEAD_EXPRESSION_MAX_LENGTH", "5000")
	got := hook(claude)
	if !strings.Contains(got, `"permissionDecision":"deny"`) || !strings.Contains(got, "inputSchema.properties.expression.maxLength") {
		t.Fatalf("widened schema: %s", got)
	}
	if got := hook(cursor); !strings.Contains(got, `"permission":"deny"`) {
		t.Fatalf("widened schema, Cursor: %s", got)
	}
	if got := hook(other); got != "{}\n" {
		t.Fatalf("another server's call was checked: %s", got)
	}

	t.Setenv("ARROWHEAD_EXPRESSION_MAX_LENGTH", "200")
	t.Setenv("ARROWHEAD_ATTESTATION_KEY", keyFile(t))
	if got := hook(claude); !strings.Contains(got, "not signed by the pinned key") {
		t.Fatalf("another key: %s", got)
	}

	// Fail closed: a server that cannot start refuses the call.
	t.Setenv("ARROWHEAD_JAIL_ROOT", filepath.Join(t.TempDir(), "missing"))
	if got := hook(claude); !strings.Contains(got, `"permissionDecision":"deny"`) {
		t.Fatalf("unreadable surface: %s", got)
	}
}

func TestAttestReadsResourcesReadResponses(t *testing.T) {
	key := keyFile(t)
	app := replica(t, key, nil)
	jwks := publicKeyFile(t, app)
	att := writeAttestation(t, app, ports.Operator())
	text, _ := os.ReadFile(att)
	contents, _ := json.Marshal(map[string]any{"contents": []any{map[string]any{"uri": core.AttestationURI, "mimeType": "application/json", "text": string(text)}}})
	rpc, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": json.RawMessage(contents)})
	bare := mustRead(t, att).JWS
	for name, body := range map[string]string{"contents": string(contents), "json-rpc": string(rpc), "bare jws": bare} {
		path := filepath.Join(t.TempDir(), "m")
		_ = os.WriteFile(path, []byte(body), 0o644)
		if code, out, errOut := runCLI("attest", "verify", path, "--key", jwks); code != exitOK || strings.TrimSpace(out) != app.ManifestDigest(ports.Operator()) {
			t.Errorf("%s: exit %d %q %s", name, code, out, errOut)
		}
	}
	// Another resource's contents are not taken for the attestation.
	wrong := strings.Replace(string(contents), core.AttestationURI, core.IntegrityURI, 1)
	path := filepath.Join(t.TempDir(), "m")
	_ = os.WriteFile(path, []byte(wrong), 0o644)
	if code, _, _ := runCLI("attest", "verify", path, "--key", jwks); code != exitFailure {
		t.Errorf("another resource's read: exit %d", code)
	}
}

// TestAttestUsage holds each subcommand's refusal of missing or extra
// arguments: exit status 2 and its own usage line, flags before or after
// the positional arguments alike.
func TestAttestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify"}, "arrowhead attest verify: usage: arrowhead attest verify MANIFEST --key KEY\n"},
		{[]string{"verify", "m"}, "arrowhead attest verify: usage: arrowhead attest verify MANIFEST --key KEY\n"},
		{[]string{"verify", "--key", "k", "m", "n"}, "arrowhead attest verify: usage: arrowhead attest verify MANIFEST --key KEY\n"},
		{[]string{"diff", "a"}, "arrowhead attest diff: usage: arrowhead attest diff OLD NEW\n"},
		{[]string{"pin", "m"}, "arrowhead attest pin: usage: arrowhead attest pin MANIFEST --key KEY [--out FILE]\n"},
		{[]string{"check", "m"}, "arrowhead attest check: usage: arrowhead attest check --pin FILE MANIFEST\n"},
		{[]string{"check", "m", "--pin"}, "flag needs an argument: -pin\n"},
		{[]string{"fetch", "extra"}, "arrowhead attest fetch: unexpected arguments\n"},
	} {
		code, stdout, stderr := runCLI(append([]string{"attest"}, tc.args...)...)
		if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("attest %q: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, stdout, stderr, exitUsage, tc.want)
		}
	}
}
