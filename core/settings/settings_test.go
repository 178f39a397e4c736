package settings

import (
	"errors"
	"strings"
	"testing"
)

func load(env map[string]string) (*Settings, error) {
	return Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
}

func TestDefaults(t *testing.T) {
	s := Defaults()
	if s.Profile != "full" || s.Transport != "stdio" || s.Port != 8000 || !s.StatelessHTTP || s.AuthEnabled {
		t.Fatalf("unexpected defaults: %+v", s)
	}
	if s.Limit("ARROWHEAD_RESOURCE_READ_PER_MINUTE", 0) != 60 || s.Limit("ARROWHEAD_NOPE_PER_MINUTE", 0) != 60 {
		t.Fatal("limits")
	}
	// A tool's own ceiling, unset, is the default its definition states;
	// set, the setting.
	if s.Limit("ARROWHEAD_CALCULATE_PER_MINUTE", 7) != 7 {
		t.Fatal("an unset tool ceiling overrode the definition's default")
	}
	set, err := load(map[string]string{"ARROWHEAD_CALCULATE_PER_MINUTE": "3"})
	if err != nil || set.Limit("ARROWHEAD_CALCULATE_PER_MINUTE", 7) != 3 {
		t.Fatalf("a set tool ceiling is not the setting: %v", err)
	}
	for _, e := range s.Effective() {
		if e.Name == "ARROWHEAD_CALCULATE_PER_MINUTE" && e.Value != e.Default {
			t.Errorf("check-config shows the unset %s as %q, its default is %q", e.Name, e.Value, e.Default)
		}
	}
	if got := strings.Join(s.DocAllowedExtensions, ","); got != ".json,.md,.txt" {
		t.Fatalf("extensions %q", got)
	}
	if s.ScanTimeoutSeconds != 10 || Seconds(s.FetchTimeoutSeconds).Seconds() != 10 {
		t.Fatal("seconds")
	}
}

func TestInvalidValuesNameTheVariable(t *testing.T) {
	cases := map[string]map[string]string{
		"ARROWHEAD_PORT":                  {"ARROWHEAD_PORT": "70000"},
		"ARROWHEAD_PROFILE":               {"ARROWHEAD_PROFILE": "everything"},
		"ARROWHEAD_RATE_LIMIT_ENABLED":    {"ARROWHEAD_RATE_LIMIT_ENABLED": "maybe"},
		"ARROWHEAD_SAFE_FETCH_PER_MINUTE": {"ARROWHEAD_SAFE_FETCH_PER_MINUTE": "0"},
		"ARROWHEAD_EGRESS_ALLOWED_PORTS":  {"ARROWHEAD_EGRESS_ALLOWED_PORTS": "8080,99999"},
		"ARROWHEAD_FETCH_TIMEOUT_SECONDS": {"ARROWHEAD_FETCH_TIMEOUT_SECONDS": "-1"},
		"ARROWHEAD_SQL_DSN":               {"ARROWHEAD_SQL_DSN": "mysql://user:hunter2@db/app"},
		"ARROWHEAD_PGVECTOR_COLLECTIONS":  {"ARROWHEAD_PGVECTOR_COLLECTIONS": "docs;drop table x"},
		"ARROWHEAD_NOTIFY_ALLOWLIST":      {"ARROWHEAD_NOTIFY_ALLOWLIST": "not a url"},
		"ARROWHEAD_AUTHZ_POLICY":          {"ARROWHEAD_AUTHZ_POLICY": "{grants"},
		"ARROWHEAD_OAUTH_SCOPE_CLAIM":     {"ARROWHEAD_OAUTH_SCOPE_CLAIM": "roles"},
		"ARROWHEAD_OAUTH_REQUIRE_AT_JWT":  {"ARROWHEAD_OAUTH_REQUIRE_AT_JWT": "sometimes"},
		"ARROWHEAD_OAUTH_DPOP":            {"ARROWHEAD_OAUTH_DPOP": "on"},
		"ARROWHEAD_OAUTH_DPOP_WINDOW":     {"ARROWHEAD_OAUTH_DPOP_WINDOW": "0"},
		"ARROWHEAD_ALLOWED_ORIGINS":       {"ARROWHEAD_ALLOWED_ORIGINS": "https://a.example/path"},
		"ARROWHEAD_LLM_INTERNAL_HOSTS":    {"ARROWHEAD_LLM_INTERNAL_HOSTS": "localhost"},
		"ARROWHEAD_REDIS_URL":             {"ARROWHEAD_REDIS_URL": "http://x"},
	}
	for name, env := range cases {
		_, err := load(env)
		var se *Error
		if !errors.As(err, &se) {
			t.Errorf("%s: no settings error (%v)", name, err)
			continue
		}
		if se.Problems[0].Var != name || !strings.HasPrefix(err.Error(), "invalid configuration: "+name+":") {
			t.Errorf("%s: got %v", name, err)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error echoes a secret", name)
		}
	}
}

func TestHTTPRequiresAuthOrExplicitInsecure(t *testing.T) {
	_, err := load(map[string]string{"ARROWHEAD_TRANSPORT": "http"})
	if err == nil || !strings.Contains(err.Error(), "ARROWHEAD_ALLOW_INSECURE_HTTP") {
		t.Fatalf("got %v", err)
	}
	if _, err := load(map[string]string{"ARROWHEAD_TRANSPORT": "http", "ARROWHEAD_ALLOW_INSECURE_HTTP": "true"}); err != nil {
		t.Fatal(err)
	}
}

// TestDPoPNeedsAuth: DPoP without token verification would promise a
// binding nothing checks, so it refuses to load.
func TestDPoPNeedsAuth(t *testing.T) {
	for _, mode := range []string{"allowed", "required"} {
		_, err := load(map[string]string{"ARROWHEAD_OAUTH_DPOP": mode})
		var se *Error
		if !errors.As(err, &se) || se.Problems[0].Var != "ARROWHEAD_OAUTH_DPOP" {
			t.Fatalf("%s with auth off: %v; want an ARROWHEAD_OAUTH_DPOP problem", mode, err)
		}
	}
	if _, err := load(map[string]string{"ARROWHEAD_OAUTH_DPOP": "off"}); err != nil {
		t.Fatal(err)
	}
}

func TestAuthRequirements(t *testing.T) {
	base := map[string]string{"ARROWHEAD_TRANSPORT": "http", "ARROWHEAD_AUTH_ENABLED": "true"}
	steps := []struct {
		add  map[string]string
		want string
	}{
		{nil, "ARROWHEAD_SERVER_PUBLIC_URL"},
		{map[string]string{"ARROWHEAD_SERVER_PUBLIC_URL": "https://mcp.example"}, "ARROWHEAD_OAUTH_ISSUER"},
		{map[string]string{"ARROWHEAD_OAUTH_ISSUER": "https://idp.example"}, "ARROWHEAD_OAUTH_AUDIENCE"},
		{map[string]string{"ARROWHEAD_OAUTH_AUDIENCE": "https://other.example"}, "ARROWHEAD_OAUTH_JWKS_URI"},
		{map[string]string{"ARROWHEAD_OAUTH_JWKS_URI": "http://idp.example/jwks"}, "ARROWHEAD_OAUTH_AUDIENCE"},
		{map[string]string{"ARROWHEAD_OAUTH_AUDIENCE": "https://mcp.example"}, "ARROWHEAD_OAUTH_JWKS_URI"},
		{map[string]string{"ARROWHEAD_OAUTH_JWKS_URI": "https://idp.example/jwks"}, ""},
	}
	env := map[string]string{}
	for k, v := range base {
		env[k] = v
	}
	for i, st := range steps {
		for k, v := range st.add {
			env[k] = v
		}
		_, err := load(env)
		if st.want == "" {
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			continue
		}
		var se *Error
		if !errors.As(err, &se) || se.Problems[0].Var != st.want {
			t.Fatalf("step %d: got %v, want a problem with %s", i, err, st.want)
		}
	}
}

func TestWorkOSDerivesIssuerAndJWKS(t *testing.T) {
	s, err := load(map[string]string{
		"ARROWHEAD_AUTH_ENABLED": "true", "ARROWHEAD_OAUTH_PROVIDER": "workos",
		"ARROWHEAD_OAUTH_AUTHKIT_DOMAIN": "https://acme.authkit.app", "ARROWHEAD_SERVER_PUBLIC_URL": "https://mcp.example/",
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Issuer() != "https://acme.authkit.app" || s.JWKSURI() != "https://acme.authkit.app/oauth2/jwks" || s.Audience() != "https://mcp.example" {
		t.Fatalf("derived %q %q %q", s.Issuer(), s.JWKSURI(), s.Audience())
	}
}

func TestEffectiveRedactsSecrets(t *testing.T) {
	s, err := load(map[string]string{"ARROWHEAD_SQL_DSN": "postgres://u:hunter2@db/app", "ARROWHEAD_LLM_API_KEY": "sk-hunter2"})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, e := range s.Effective() {
		if strings.Contains(e.Value, "hunter2") {
			t.Fatalf("%s printed a secret", e.Name)
		}
		if e.Name == "ARROWHEAD_SQL_DSN" || e.Name == "ARROWHEAD_LLM_API_KEY" {
			found++
			if e.Value != Redacted {
				t.Fatalf("%s = %q", e.Name, e.Value)
			}
		}
	}
	if found != 2 || len(s.Effective()) != len(Names()) {
		t.Fatal("effective listing incomplete")
	}
}

func TestSQLAlchemyDSNAccepted(t *testing.T) {
	for _, dsn := range []string{"postgresql+asyncpg://u@h/db", "postgres://u@h/db", "postgresql://u@h:5432/db?sslmode=disable"} {
		if _, err := load(map[string]string{"ARROWHEAD_SQL_DSN": dsn}); err != nil {
			t.Errorf("%s: %v", dsn, err)
		}
	}
}

func TestVectorCollectionsDefaultOnlyWithoutPostgres(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, "doc_chunks"},
		{map[string]string{"ARROWHEAD_PGVECTOR_COLLECTIONS": "a,b"}, "a,b"},
		{map[string]string{"ARROWHEAD_SQL_DSN": "postgresql://u@h/db"}, ""},
		{map[string]string{"ARROWHEAD_VECTOR_WRITE_DSN": "postgresql://u@h/db"}, ""},
		{map[string]string{"ARROWHEAD_SQL_DSN": "postgresql://u@h/db", "ARROWHEAD_PGVECTOR_COLLECTIONS": "c"}, "c"},
	}
	for _, c := range cases {
		s, err := Load(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(s.VectorCollections(), ","); got != c.want {
			t.Errorf("%v: collections %q, want %q", c.env, got, c.want)
		}
	}
}
