package e2e

import (
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// Adversarial bearer-token classes, over real HTTP against the built
// binary, with keys from an in-process IdP's JWKS.

// postStatus sends a tools/list with token and returns the status code.
func postStatus(t *testing.T, s *server, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestScopesComeFromOneClaimOverHTTP: a token's scope and scp claims never
// add up; the server reads ARROWHEAD_OAUTH_SCOPE_CLAIM alone.
func TestScopesComeFromOneClaimOverHTTP(t *testing.T) {
	p := newIdP(t)
	tests := []struct {
		name      string
		claim     string // ARROWHEAD_OAUTH_SCOPE_CLAIM; "" leaves the default
		scopes    map[string]any
		want, not string
	}{
		{"default reads scope, ignores scp string", "",
			map[string]any{"scope": "tools:read", "scp": "docs:write"}, "calculate", "doc_write"},
		{"default reads scope, ignores scp array", "",
			map[string]any{"scope": "tools:read", "scp": []string{"docs:write"}}, "calculate", "doc_write"},
		{"scp reads scp array, ignores scope", "scp",
			map[string]any{"scope": "tools:read", "scp": []string{"docs:write"}}, "doc_write", "calculate"},
		{"scp reads scp string, ignores scope", "scp",
			map[string]any{"scope": "tools:read", "scp": "docs:write"}, "doc_write", "calculate"},
	}
	servers := map[string]*server{}
	for _, tc := range tests {
		if servers[tc.claim] == nil {
			extra := map[string]string{}
			if tc.claim != "" {
				extra["ARROWHEAD_OAUTH_SCOPE_CLAIM"] = tc.claim
			}
			servers[tc.claim] = startHTTP(t, p.env(extra))
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := servers[tc.claim]
			c := s.connect(t, p.mint(t, p.claims(tc.scopes), "at+jwt"))
			names := toolNames(t, c)
			if !slices.Contains(names, tc.want) || slices.Contains(names, tc.not) {
				t.Fatalf("tools = %v: want %s, never %s", names, tc.want, tc.not)
			}
			if r := call(t, c, tc.not, map[string]any{}); !r.IsError || text(r) != "Unknown tool." {
				t.Fatalf("%s through the ignored claim: %s", tc.not, text(r))
			}
		})
	}
}

// TestClaimTypesOverHTTP: time claims must be JSON numbers, and typ must
// name a JWT access token; ARROWHEAD_OAUTH_REQUIRE_AT_JWT narrows typ to
// at+jwt.
func TestClaimTypesOverHTTP(t *testing.T) {
	p := newIdP(t)
	lenient := startHTTP(t, p.env(nil))
	strict := startHTTP(t, p.env(map[string]string{"ARROWHEAD_OAUTH_REQUIRE_AT_JWT": "true"}))
	scoped := func(set map[string]any) map[string]any {
		set["scope"] = "tools:read"
		return p.claims(set)
	}
	now := time.Now()
	tests := []struct {
		name                string
		claims              map[string]any
		typ                 any
		lenientOK, strictOK bool
	}{
		{"valid at+jwt", scoped(map[string]any{}), "at+jwt", true, true},
		{"valid application/at+jwt", scoped(map[string]any{}), "application/at+jwt", true, true},
		{"valid AT+JWT", scoped(map[string]any{}), "AT+JWT", true, true},
		{"typ JWT", scoped(map[string]any{}), "JWT", true, false},
		{"no typ", scoped(map[string]any{}), nil, true, false},
		{"typ JWE", scoped(map[string]any{}), "JWE", false, false},
		{"typ JOSE", scoped(map[string]any{}), "JOSE", false, false},
		{"typ secevent+jwt", scoped(map[string]any{}), "secevent+jwt", false, false},
		{"typ with a parameter", scoped(map[string]any{}), "at+jwt;v=1", false, false},
		{"exp a numeric string", scoped(map[string]any{"exp": "9999999999"}), "at+jwt", false, false},
		{"nbf a numeric string", scoped(map[string]any{"nbf": "0"}), "at+jwt", false, false},
		{"iat a numeric string", scoped(map[string]any{"iat": "1"}), "at+jwt", false, false},
		{"exp an array", scoped(map[string]any{"exp": []any{now.Unix()}}), "at+jwt", false, false},
		{"exp a boolean", scoped(map[string]any{"exp": true}), "at+jwt", false, false},
		{"exp a number far ahead", scoped(map[string]any{"exp": now.Add(24 * time.Hour).Unix()}), "at+jwt", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			token := p.mint(t, tc.claims, tc.typ)
			for _, side := range []struct {
				name string
				s    *server
				ok   bool
			}{{"lenient", lenient, tc.lenientOK}, {"strict", strict, tc.strictOK}} {
				want := http.StatusUnauthorized
				if side.ok {
					want = http.StatusOK
				}
				if got := postStatus(t, side.s, token); got != want {
					t.Errorf("%s server: status %d, want %d", side.name, got, want)
				}
			}
		})
	}
}

// TestUnknownScopeClaimRefusesStartUp: the variable is validated and named.
func TestUnknownScopeClaimRefusesStartUp(t *testing.T) {
	for name, value := range map[string]string{"ARROWHEAD_OAUTH_SCOPE_CLAIM": "roles", "ARROWHEAD_OAUTH_REQUIRE_AT_JWT": "maybe"} {
		dir := t.TempDir()
		cmd := exec.Command(binary, "serve")
		cmd.Env = baseEnv(t, dir, map[string]string{name: value})
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), name) {
			t.Errorf("%s=%s: %v, output %q; want a refusal naming the variable", name, value, err, out)
		}
	}
}
