package notify_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/tools/notify"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

const (
	hook = "https://hooks.example.com/services/T0/B0?token=abc"
	// A Standard Webhooks secret: whsec_ and the base64 of 24 bytes.
	secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	// grantNotify grants notify on one destination prefix only.
	grantNotify = `{"grants":[{"subject":"*","actions":["notify"],"kinds":["webhook"],"prefix":"hooks.example.com/services"}]}`
)

var alice = ports.NewPrincipal("alice", "notify:send")

type env struct {
	app    *core.App
	egress *portstest.Egress
}

func newEnv(t *testing.T, policy string, signed bool, vars map[string]string) env {
	t.Helper()
	all := map[string]string{"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_RATE_LIMIT_ENABLED": "false",
		"ARROWHEAD_NOTIFY_ALLOWLIST": "https://hooks.example.com/services/,https://other.example.org/in"}
	for k, v := range vars {
		all[k] = v
	}
	s := coretest.Settings(t, all)
	pol, err := authz.Parse([]byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	allow, err := security.ParseURLAllowlist(s.NotifyAllowlist)
	if err != nil {
		t.Fatal(err)
	}
	eg := &portstest.Egress{Response: ports.FetchResponse{Status: 200, ContentType: "text/plain", Body: []byte("ok\x1b[31m")}}
	p := notify.Ports{Egress: eg, Allowlist: &allow, Authorizer: pol,
		Scanner: security.NewScanner([]byte("0123456789abcdef0123456789abcdef")), Clock: &portstest.Clock{T: time.Unix(1700000000, 0)}}
	if signed {
		if p.Signer, err = security.NewWebhookSigner(secret); err != nil {
			t.Fatal(err)
		}
	}
	app, err := core.New(coretest.Deps(s, pol, notify.Family.With(p)))
	if err != nil {
		t.Fatal(err)
	}
	return env{app: app, egress: eg}
}

func (e env) call(t *testing.T, args map[string]any) (catalog.Result, *catalog.ToolError) {
	t.Helper()
	res, err := e.app.Call(t.Context(), alice, "notify_webhook", args)
	if err != nil {
		te, ok := catalog.AsToolError(err)
		if !ok {
			t.Fatalf("non-ToolError %v", err)
		}
		return res, te
	}
	return res, nil
}

func TestNotifyDeliversSignedPayload(t *testing.T) {
	e := newEnv(t, grantNotify, true, nil)
	res, te := e.call(t, map[string]any{"url": hook, "payload": map[string]any{"text": "build done", "n": 3}})
	if te != nil {
		t.Fatalf("refused: %v", te)
	}
	reqs := e.egress.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.URL != hook || r.MaxRedirects != 0 || !r.TruncateBody || r.Internal {
		t.Fatalf("request %+v", r)
	}
	if string(r.Body) != `{"n":3,"text":"build done"}` {
		t.Fatalf("body %s", r.Body)
	}
	if _, ok := r.Headers["Authorization"]; ok {
		t.Fatal("a credential header was attached")
	}
	// Verify the signature as a receiver would, from the headers alone.
	id, ts, sig := r.Headers["webhook-id"], r.Headers["webhook-timestamp"], r.Headers["webhook-signature"]
	if ts != "1700000000" || !strings.HasPrefix(id, "msg_") {
		t.Fatalf("id %q ts %q", id, ts)
	}
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(r.Body)))
	if want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)); sig != want {
		t.Fatalf("signature %q, want %q", sig, want)
	}
	st := res.Structured()
	if st["status"] != float64(200) || st["delivered"] != true || st["signed"] != true || st["webhook_id"] != id || st["untrusted"] != true {
		t.Fatalf("structured %v", st)
	}
	if strings.Contains(res.Text, "\x1b") || !strings.Contains(res.Text, "ok") {
		t.Fatalf("the response was not sanitized and framed: %q", res.Text)
	}
}

func TestNotifyUnsignedWithoutSecret(t *testing.T) {
	e := newEnv(t, grantNotify, false, nil)
	res, te := e.call(t, map[string]any{"url": hook, "payload": map[string]any{"a": 1}})
	if te != nil {
		t.Fatal(te)
	}
	if _, ok := e.egress.Requests()[0].Headers["webhook-signature"]; ok || res.Structured()["signed"] != false {
		t.Fatal("an unsigned delivery claimed a signature")
	}
}

func TestNotifyRefusesBeforeSending(t *testing.T) {
	e := newEnv(t, grantNotify, true, map[string]string{"ARROWHEAD_NOTIFY_MAX_PAYLOAD_BYTES": "64"})
	cases := map[string]map[string]any{
		"not allowlisted":    {"url": "https://evil.example/services/x", "payload": map[string]any{}},
		"suffix trick":       {"url": "https://hooks.example.com.evil.example/services/x", "payload": map[string]any{}},
		"userinfo trick":     {"url": "https://hooks.example.com@evil.example/services/x", "payload": map[string]any{}},
		"dot segments":       {"url": "https://hooks.example.com/services/../admin", "payload": map[string]any{}},
		"path boundary":      {"url": "https://hooks.example.com/servicesx", "payload": map[string]any{}},
		"not granted":        {"url": "https://other.example.org/in/x", "payload": map[string]any{}},
		"payload too large":  {"url": hook, "payload": map[string]any{"text": strings.Repeat("x", 100)}},
		"secret in payload":  {"url": hook, "payload": map[string]any{"text": "key ghp_" + strings.Repeat("a1B2", 9)}},
		"payload not object": {"url": hook, "payload": "text"},
	}
	for name, args := range cases {
		_, te := e.call(t, args)
		if te == nil {
			t.Errorf("%s: delivered", name)
			continue
		}
		if u, _ := args["url"].(string); strings.Contains(te.Message, "example") || (u != "" && strings.Contains(te.Message, u)) {
			t.Errorf("%s: the refusal echoes the URL: %q", name, te.Message)
		}
	}
	if n := len(e.egress.Requests()); n != 0 {
		t.Fatalf("%d requests left the server", n)
	}
}

func TestNotifyDeniedByDefaultPolicy(t *testing.T) {
	e := newEnv(t, `{"grants":[{"subject":"*","actions":["read"],"prefix":""}]}`, true, nil)
	_, te := e.call(t, map[string]any{"url": hook, "payload": map[string]any{}})
	if te == nil || te.Kind != catalog.KindAuthorization {
		t.Fatalf("want a denial, got %v", te)
	}
	if len(e.egress.Requests()) != 0 {
		t.Fatal("a denied call was delivered")
	}
}

func TestNotifyMapsEgressRefusals(t *testing.T) {
	e := newEnv(t, grantNotify, true, nil)
	e.egress.Err = &ports.EgressError{Reason: ports.EgressRedirectRefused}
	_, te := e.call(t, map[string]any{"url": hook, "payload": map[string]any{}})
	if te == nil || te.Kind != catalog.KindFailed || !strings.Contains(te.Message, "edirect") {
		t.Fatalf("redirect: %v", te)
	}
	e.egress.Err = &ports.EgressError{Reason: ports.EgressBlockedAddress}
	_, te = e.call(t, map[string]any{"url": hook, "payload": map[string]any{}})
	if te == nil || te.Kind != catalog.KindValidation {
		t.Fatalf("blocked address: %v", te)
	}
}

func TestNotifyFamilyGatedByAllowlist(t *testing.T) {
	s := coretest.Settings(t, nil)
	app, err := core.New(coretest.Deps(s, portstest.AllowAll{}, notify.Family.With(notify.Ports{})))
	if err != nil {
		t.Fatalf("an ungated family with no ports must not be bound: %v", err)
	}
	for _, tool := range app.ListTools(t.Context(), ports.Operator()) {
		if tool.Spec.Name() == "notify_webhook" {
			t.Fatal("notify_webhook listed with an empty allowlist")
		}
	}
	// Serves is the one answer adapters/wire asks before opening the
	// family's egress path: the allowlist and the profile both decide.
	allow := "https://hooks.example.com/services/"
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"ARROWHEAD_NOTIFY_ALLOWLIST": allow}, true},
		{map[string]string{"ARROWHEAD_NOTIFY_ALLOWLIST": allow, "ARROWHEAD_PROFILE": "docs"}, true},
		{map[string]string{"ARROWHEAD_NOTIFY_ALLOWLIST": allow, "ARROWHEAD_PROFILE": "coding"}, false},
	} {
		if got := notify.Family.Serves(coretest.Settings(t, tc.env)); got != tc.want {
			t.Errorf("%v: Serves = %v, want %v", tc.env, got, tc.want)
		}
	}
}
