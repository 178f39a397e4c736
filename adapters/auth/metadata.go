package auth

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// MetadataPath is where the RFC 9728 protected-resource metadata for the
// /mcp endpoint is served.
const MetadataPath = "/.well-known/oauth-protected-resource/mcp"

// MetadataCacheControl lets clients and proxies cache the metadata
// document, which changes only with configuration.
const MetadataCacheControl = "public, max-age=3600"

// MetadataURL returns the metadata URL for a server whose public URL is
// publicURL (a trailing slash is ignored).
func MetadataURL(publicURL string) string {
	return strings.TrimRight(publicURL, "/") + MetadataPath
}

// protectedResource is the RFC 9728 document. It deliberately has no
// scopes_supported: a caller learns its scopes from the filtered tool list,
// never from an unauthenticated probe.
type protectedResource struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	// The DPoP members (RFC 9728 section 2), present only with DPoP on.
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
	DPoPBoundAccessTokensRequired *bool    `json:"dpop_bound_access_tokens_required,omitempty"`
}

// ProtectedResourceHandler serves the RFC 9728 protected-resource metadata
// for resource, naming authorizationServers. With WithDPoP it also
// advertises the DPoP proof algorithms and whether bound tokens are
// required. It answers GET and HEAD with cacheable JSON and anything else
// with 405. It panics when resource or authorizationServers is empty: both
// are wiring mistakes.
func ProtectedResourceHandler(resource string, authorizationServers []string, opts ...Option) http.Handler {
	if resource == "" || len(authorizationServers) == 0 || slices.Contains(authorizationServers, "") {
		panic("auth: ProtectedResourceHandler needs a resource and at least one authorization server")
	}
	pr := protectedResource{
		Resource:               resource,
		AuthorizationServers:   slices.Clone(authorizationServers),
		BearerMethodsSupported: []string{"header"},
	}
	if d := collect(opts).dpop; d != nil {
		required := d.Required()
		pr.DPoPSigningAlgValuesSupported = d.Algorithms()
		pr.DPoPBoundAccessTokensRequired = &required
	}
	doc, err := json.Marshal(pr)
	if err != nil {
		panic("auth: encoding the protected-resource metadata failed")
	}
	length := strconv.Itoa(len(doc))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "method_not_allowed", ErrorDescription: "use GET"})
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", MetadataCacheControl)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Length", length)
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(doc)
		}
	})
}

// writeJSON writes a small, never-cached JSON body.
func writeJSON(w http.ResponseWriter, status int, body any) {
	data, err := json.Marshal(body)
	if err != nil {
		data = []byte(`{"error":"internal"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}
