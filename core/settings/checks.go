package settings

import (
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/security"
)

// hostOrHostPort accepts a Host header value: a host name or host:port.
var hostOrHostPort = check{"a host name or host:port", func(raw string) error {
	if strings.Contains(raw, ":") && !strings.HasPrefix(raw, "[") && strings.Count(raw, ":") == 1 {
		return isHostPort(raw)
	}
	if strings.HasPrefix(raw, "[") && strings.Contains(raw, "]:") {
		return isHostPort(raw)
	}
	return isHostname(raw)
}}

// httpURLWithQuery accepts an absolute http(s) URL that may carry a path
// and query (API endpoints, JWKS URIs), never credentials or a fragment.
var httpURLWithQuery = check{"an absolute http or https URL without credentials or fragment", func(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an absolute http or https URL")
	}
	if u.User != nil {
		return errors.New("must not carry credentials")
	}
	if u.Fragment != "" {
		return errors.New("must not carry a fragment")
	}
	return nil
}}

// httpURLWithPath is an absolute http(s) base URL (a collector endpoint).
var httpURLWithPath = check{"an absolute http or https base URL without credentials, query or fragment", isHTTPURL}

// listenAddr accepts a listening address: host:port, or a bare port (9464
// or :9464), which binds loopback.
var listenAddr = check{"host:port, or a bare port (which binds loopback)", func(raw string) error {
	return isHostPort(loopbackIfPort(raw))
}}

// loopbackIfPort turns a bare port into a loopback address, so that naming
// only a port never binds every interface.
func loopbackIfPort(raw string) string {
	port := strings.TrimPrefix(raw, ":")
	if _, err := strconv.Atoi(port); err == nil {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return raw
}

// MetricsListenAddr is the address the Prometheus endpoint binds (a bare
// port means loopback); "" when the endpoint is off.
func (s *Settings) MetricsListenAddr() string {
	if s.MetricsAddr == "" {
		return ""
	}
	return loopbackIfPort(s.MetricsAddr)
}

// authkitDomain accepts a bare host or an https origin.
var authkitDomain = check{"a host name or an origin", func(raw string) error {
	if strings.Contains(raw, "://") {
		return isOrigin(raw)
	}
	return isHostname(raw)
}}

// policyJSON checks that the inline policy is a JSON object; its grants are
// validated by the authorization engine at start-up.
var policyJSON = check{`a JSON object like {"grants":[...]}`, func(raw string) error {
	var v map[string]any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return errors.New("must be a JSON object like {\"grants\":[...]}")
	}
	return nil
}}

// IsHTTP reports whether the transport serves streamable HTTP.
func (s *Settings) IsHTTP() bool { return s.Transport == "http" || s.Transport == "streamable-http" }

// CanonicalResource is the server's canonical resource URI: the public URL
// without a trailing slash. Token audiences must name it (or its /mcp
// endpoint).
func (s *Settings) CanonicalResource() string {
	return strings.TrimRight(s.ServerPublicURL, "/")
}

// Issuer returns the effective token issuer (derived for workos).
func (s *Settings) Issuer() string {
	if s.OAuthProvider == "workos" {
		return "https://" + authkitHost(s.OAuthAuthkitDomain)
	}
	return s.OAuthIssuer
}

// JWKSURI returns the effective JWKS URI (derived for workos).
func (s *Settings) JWKSURI() string {
	if s.OAuthProvider == "workos" {
		return "https://" + authkitHost(s.OAuthAuthkitDomain) + "/oauth2/jwks"
	}
	return s.OAuthJWKSURI
}

// Audience returns the effective audience: the configured one, or for the
// workos provider the canonical resource URI when none is configured.
func (s *Settings) Audience() string {
	if s.OAuthAudience == "" && s.OAuthProvider == "workos" {
		return s.CanonicalResource()
	}
	return s.OAuthAudience
}

func authkitHost(domain string) string {
	d := strings.TrimSpace(domain)
	if u, err := url.Parse(d); err == nil && u.Host != "" {
		return u.Host
	}
	return strings.TrimRight(d, "/")
}

// crossCheck validates rules that span variables. Each problem names the
// variable to change.
func (s *Settings) crossCheck() []Problem {
	var ps []Problem
	add := func(v, reason string) { ps = append(ps, Problem{Var: v, Reason: reason}) }

	if s.IsHTTP() && !s.AuthEnabled && !s.AllowInsecureHTTP {
		add("ARROWHEAD_ALLOW_INSECURE_HTTP",
			"serving HTTP with ARROWHEAD_AUTH_ENABLED=false exposes every tool unchecked; enable auth, or set ARROWHEAD_ALLOW_INSECURE_HTTP=true for a trusted-network test")
	}
	if s.AuthEnabled {
		if s.ServerPublicURL == "" {
			add("ARROWHEAD_SERVER_PUBLIC_URL", "is required when auth is enabled (the canonical resource URI)")
		}
		switch s.OAuthProvider {
		case "workos":
			if s.OAuthAuthkitDomain == "" {
				add("ARROWHEAD_OAUTH_AUTHKIT_DOMAIN", "is required when ARROWHEAD_OAUTH_PROVIDER=workos")
			}
		default:
			if s.OAuthIssuer == "" {
				add("ARROWHEAD_OAUTH_ISSUER", "is required when auth is enabled")
			}
			if s.OAuthAudience == "" {
				add("ARROWHEAD_OAUTH_AUDIENCE", "is required when auth is enabled (it must equal the canonical resource URI)")
			}
			if s.OAuthJWKSURI == "" && s.OAuthPublicKey == "" {
				add("ARROWHEAD_OAUTH_JWKS_URI", "a key source is required when auth is enabled: set ARROWHEAD_OAUTH_JWKS_URI or ARROWHEAD_OAUTH_PUBLIC_KEY")
			}
			if s.OAuthJWKSURI != "" && s.OAuthPublicKey != "" {
				add("ARROWHEAD_OAUTH_PUBLIC_KEY", "set exactly one key source: ARROWHEAD_OAUTH_JWKS_URI or ARROWHEAD_OAUTH_PUBLIC_KEY, not both")
			}
		}
		if aud, res := s.Audience(), s.CanonicalResource(); aud != "" && res != "" &&
			strings.TrimRight(aud, "/") != res && strings.TrimRight(aud, "/") != res+"/mcp" {
			add("ARROWHEAD_OAUTH_AUDIENCE", "must equal the canonical resource URI (ARROWHEAD_SERVER_PUBLIC_URL, or its /mcp endpoint)")
		}
		if u := s.JWKSURI(); u != "" && !secureOrLoopback(u) {
			add("ARROWHEAD_OAUTH_JWKS_URI", "must use https (plain http is accepted only for a loopback host)")
		}
	}
	if s.OAuthDPoP != "" && s.OAuthDPoP != "off" && !s.AuthEnabled {
		add("ARROWHEAD_OAUTH_DPOP", "needs ARROWHEAD_AUTH_ENABLED=true: without token verification there is no token to bind")
	}
	if addr := s.MetricsListenAddr(); addr != "" && s.IsHTTP() {
		if _, port, _ := net.SplitHostPort(addr); port == strconv.Itoa(s.Port) {
			add("ARROWHEAD_METRICS_ADDR", "must not share ARROWHEAD_PORT: metrics are never served on the public listener")
		}
	}
	if s.VectorIndexChunkOverlap >= s.VectorIndexChunkMaxChars {
		add("ARROWHEAD_VECTOR_INDEX_CHUNK_OVERLAP", "must be smaller than ARROWHEAD_VECTOR_INDEX_CHUNK_MAX_CHARS")
	}
	if s.EmbeddingDimensions > s.PgvectorMaxDimensions {
		add("ARROWHEAD_EMBEDDING_DIMENSIONS", "must not exceed ARROWHEAD_PGVECTOR_MAX_DIMENSIONS")
	}
	if s.EmbeddingProvider == "http" && s.EmbeddingEndpoint == "" {
		add("ARROWHEAD_EMBEDDING_ENDPOINT", "is required when ARROWHEAD_EMBEDDING_PROVIDER=http")
	}
	if s.EmbeddingProvider == "http" && s.EmbeddingEndpoint != "" && !s.endpointPermitted(s.EmbeddingEndpoint) {
		add("ARROWHEAD_EGRESS_ALLOWED_HOSTS", "must name the embedding endpoint's host (or ARROWHEAD_LLM_INTERNAL_HOSTS its exact host:port)")
	}
	if s.LLMProvider != "none" && s.LLMEndpoint == "" && s.LLMProvider == "openai" {
		add("ARROWHEAD_LLM_ENDPOINT", "is required when ARROWHEAD_LLM_PROVIDER=openai")
	}
	if s.LLMProvider != "none" && s.LLMEndpoint != "" && len(s.EgressAllowedHosts) > 0 && !s.endpointPermitted(s.LLMEndpoint) {
		add("ARROWHEAD_EGRESS_ALLOWED_HOSTS", "must name the model endpoint's host (or ARROWHEAD_LLM_INTERNAL_HOSTS its exact host:port)")
	}
	if s.ExecRunner == "container" && s.ExecEnabled && s.ExecContainerImage == "" {
		add("ARROWHEAD_EXEC_CONTAINER_IMAGE", "is required when ARROWHEAD_EXEC_RUNNER=container")
	}
	return ps
}

func secureOrLoopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// endpointPermitted reports whether a configuration-addressed endpoint is
// named by the egress allowlist (host) or the internal list (host:port).
func (s *Settings) endpointPermitted(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	for _, h := range s.EgressAllowedHosts {
		if strings.ToLower(h) == host {
			return true
		}
	}
	for _, hp := range s.LLMInternalHosts {
		if strings.EqualFold(hp, net.JoinHostPort(host, port)) {
			return true
		}
	}
	return false
}

// notifyPrefix is one ARROWHEAD_NOTIFY_ALLOWLIST entry, parsed by the same
// code that matches deliveries against it.
var notifyPrefix = check{"an absolute http or https URL prefix", func(raw string) error {
	if _, err := security.ParseURLAllowlist([]string{raw}); err != nil {
		return security.ErrAllowlistEntry
	}
	return nil
}}

// webhookSecret is a Standard Webhooks whsec_ signing secret.
var webhookSecret = check{"a Standard Webhooks secret (whsec_ and base64)", func(raw string) error {
	_, err := security.NewWebhookSigner(raw)
	return err
}}

// DefaultEmbeddedCollection is the collection the embedded vector index
// serves when no PostgreSQL is configured and ARROWHEAD_PGVECTOR_COLLECTIONS
// is empty, so doc_index then vector_query work on a fresh machine.
const DefaultEmbeddedCollection = "doc_chunks"

// VectorCollections are the collections the vector tools may address:
// ARROWHEAD_PGVECTOR_COLLECTIONS when set; otherwise, with neither
// ARROWHEAD_SQL_DSN nor ARROWHEAD_VECTOR_WRITE_DSN set, the embedded index's
// default collection. A PostgreSQL deployment keeps its explicit
// allow-list: with a DSN set and no list, no collection is served.
func (s *Settings) VectorCollections() []string {
	if len(s.PgvectorCollections) > 0 || s.SQLDSN != "" || s.VectorWriteDSN != "" {
		return s.PgvectorCollections
	}
	return []string{DefaultEmbeddedCollection}
}
