package auth

import (
	"context"
	"net/http"
	"strings"

	"github.com/arrowhead-go/arrowhead/ports"
)

// TokenVerifier verifies a bearer token and returns the principal it
// vouches for. Implementations must be safe for concurrent use, and their
// errors must not carry the token or claim values.
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (ports.Principal, error)
}

type principalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p ports.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFromContext returns the principal the middleware stored, and
// whether there was one.
func PrincipalFromContext(ctx context.Context) (ports.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(ports.Principal)
	return p, ok
}

// Middleware admits only requests bearing a token v accepts. A missing,
// malformed or refused token gets a 401 whose WWW-Authenticate names
// resourceMetadataURL (RFC 9728), with error="invalid_token" when a bearer
// token was presented, and refused (if non-nil) is called with the reason
// code so the caller can write its audit line. An admitted request reaches
// next with the principal in its context and with its Authorization header
// removed, so the token can never be forwarded. The request handed to
// refused has its Authorization header removed too.
//
// It panics if v is nil or resourceMetadataURL is not a plain absolute URL:
// both are wiring mistakes.
func Middleware(v TokenVerifier, resourceMetadataURL string, refused func(r *http.Request, reason string)) func(http.Handler) http.Handler {
	if v == nil {
		panic("auth: Middleware needs a TokenVerifier")
	}
	if !quotable(resourceMetadataURL) || !strings.Contains(resourceMetadataURL, "://") {
		panic("auth: Middleware needs an absolute resource metadata URL")
	}
	challenge := `Bearer resource_metadata="` + resourceMetadataURL + `"`
	invalid := `Bearer error="invalid_token", resource_metadata="` + resourceMetadataURL + `"`
	if refused == nil {
		refused = func(*http.Request, string) {}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			values := r.Header.Values("Authorization")
			r = withoutAuthorization(r)
			deny := func(presented bool, reason string) {
				refused(r, reason)
				if presented {
					w.Header().Set("WWW-Authenticate", invalid)
				} else {
					w.Header().Set("WWW-Authenticate", challenge)
				}
				writeJSON(w, http.StatusUnauthorized, unauthorizedBody(presented))
			}
			if len(values) == 0 {
				deny(false, ErrMissingToken.Reason())
				return
			}
			token, presented, ok := bearerToken(values)
			if !ok {
				deny(presented, ErrMalformedAuthorization.Reason())
				return
			}
			p, err := v.Verify(r.Context(), token)
			if err == nil && (!p.Authenticated || p.Subject == "") {
				err = ErrNoPrincipal
			}
			if err != nil {
				deny(true, ReasonOf(err))
				return
			}
			next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
		})
	}
}

// bearerToken extracts the token from exactly one "Bearer <token>" header
// value (scheme matched case-insensitively, RFC 9110 section 11.1; one
// space; a b64token per RFC 6750 section 2.1). presented reports whether a
// Bearer credential was offered at all.
func bearerToken(values []string) (token string, presented, ok bool) {
	if len(values) != 1 {
		return "", true, false
	}
	scheme, rest, found := strings.Cut(values[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false, false
	}
	if !found || !isB64Token(rest) {
		return "", true, false
	}
	return rest, true, true
}

// isB64Token reports whether s matches 1*( ALPHA / DIGIT / "-" / "." / "_"
// / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// withoutAuthorization returns a shallow copy of r whose header map is a
// copy without Authorization; the inbound request is left untouched.
func withoutAuthorization(r *http.Request) *http.Request {
	h := r.Header.Clone()
	h.Del("Authorization")
	r2 := r.WithContext(r.Context())
	r2.Header = h
	return r2
}

// quotable reports whether s can sit inside an HTTP quoted-string as is.
func quotable(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

type errorBody struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

func unauthorizedBody(presented bool) errorBody {
	if presented {
		return errorBody{Error: "invalid_token", ErrorDescription: "the bearer token was not accepted"}
	}
	return errorBody{Error: "unauthorized", ErrorDescription: "a bearer token is required"}
}
