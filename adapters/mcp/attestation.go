package mcp

import (
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/arrowhead-go/arrowhead/core"
)

// AttestationMetaKey carries, in the _meta of every tools/list result, the
// SHA-256 of the caller's canonical surface manifest (the payload the
// arrowhead://attestation resource signs): {"algorithm": "sha256",
// "digest": hex, "uri": "arrowhead://attestation"}. A client that pinned a
// digest compares it here on every listing, in either protocol era.
const AttestationMetaKey = "io.arrowhead/attestation"

// AttestationKeyPath serves the public attestation key as a JWK set, without
// authentication: it is public, and a verifier needs it before it holds any
// token.
const AttestationKeyPath = "/.well-known/arrowhead-attestation-key"

// stampAttestation adds the manifest digest to a tools/list result's _meta,
// beside whatever mcp-go puts there (the 2026-07-28 era's server identity,
// which it adds after this hook and keeps what it finds).
func stampAttestation(r *mcp.ListToolsResult, digest string) {
	entry := map[string]any{"algorithm": "sha256", "digest": digest, "uri": core.AttestationURI}
	if r.Meta == nil {
		r.Meta = mcp.NewMetaFromMap(map[string]any{AttestationMetaKey: entry})
		return
	}
	if r.Meta.AdditionalFields == nil {
		r.Meta.AdditionalFields = map[string]any{}
	}
	r.Meta.AdditionalFields[AttestationMetaKey] = entry
}

// attestationKeyHandler serves AttestationKeyPath: the JWK set, or 404 when
// the application has no signing key.
func (s *Server) attestationKeyHandler() http.Handler {
	keys := s.app.AttestationKeySet()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if keys == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(keys)
	})
}
