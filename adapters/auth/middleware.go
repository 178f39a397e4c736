package auth

import (
	"context"
	"errors"
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

// Option adjusts Middleware and ProtectedResourceHandler.
type Option func(*options)

type options struct {
	dpop *DPoP
}

// WithDPoP turns DPoP (RFC 9449) on as d's mode says; a nil d (NewDPoP's
// answer for "off") leaves it off.
func WithDPoP(d *DPoP) Option { return func(o *options) { o.dpop = d } }

func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Authorization schemes the middleware reads.
const (
	schemeNone   = ""
	schemeBearer = "Bearer"
	schemeDPoP   = "DPoP"
	// schemeAny marks a credential whose scheme cannot be told (several
	// Authorization values): its refusal is reported on every challenge.
	schemeAny = "*"
)

// Middleware admits only requests bearing a token v accepts. A missing,
// malformed or refused token gets a 401 whose WWW-Authenticate names
// resourceMetadataURL (RFC 9728), with error="invalid_token" when a bearer
// token was presented, and refused (if non-nil) is called with the reason
// code so the caller can write its audit line. An admitted request reaches
// next with the principal in its context and with its Authorization (and
// DPoP) headers removed, so the token can never be forwarded. The request
// handed to refused has them removed too.
//
// WithDPoP turns on DPoP: "Authorization: DPoP <token>" with a valid proof
// in the DPoP header is accepted for a token bound with cnf.jkt; a bound
// token presented as Bearer is refused; under DPoPRequired so is every
// Bearer token. The 401 then carries the DPoP challenge (with algs, and
// error="invalid_dpop_proof" for a refused proof) beside or instead of the
// Bearer one. A replay store that cannot answer refuses the request with
// 503 (fail closed).
//
// It panics if v is nil, if DPoP is on and v does not report token
// binding (BoundVerifier), or if resourceMetadataURL is not a plain
// absolute URL: all are wiring mistakes.
func Middleware(v TokenVerifier, resourceMetadataURL string, refused func(r *http.Request, reason string), opts ...Option) func(http.Handler) http.Handler {
	if v == nil {
		panic("auth: Middleware needs a TokenVerifier")
	}
	if !quotable(resourceMetadataURL) || !strings.Contains(resourceMetadataURL, "://") {
		panic("auth: Middleware needs an absolute resource metadata URL")
	}
	o := collect(opts)
	var bound BoundVerifier
	if o.dpop != nil {
		var ok bool
		if bound, ok = v.(BoundVerifier); !ok {
			panic("auth: DPoP needs a verifier that reports token binding")
		}
	}
	ch := newChallenges(resourceMetadataURL, o.dpop)
	if refused == nil {
		refused = func(*http.Request, string) {}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			values := r.Header.Values("Authorization")
			proofs := r.Header.Values("DPoP")
			r = withoutCredentials(r)
			deny := func(scheme string, err error) {
				refused(r, ReasonOf(err))
				if errors.Is(err, ErrDPoPReplayUnavailable) {
					w.Header().Set("Retry-After", "1")
					writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: "temporarily_unavailable", ErrorDescription: "the request cannot be checked now; retry shortly"})
					return
				}
				code := errorCode(scheme, err)
				for _, c := range ch.render(scheme, code) {
					w.Header().Add("WWW-Authenticate", c)
				}
				writeJSON(w, http.StatusUnauthorized, unauthorizedBody(code))
			}
			scheme, token, err := credential(values, o.dpop != nil)
			if err != nil {
				deny(scheme, err)
				return
			}
			if scheme == schemeBearer && o.dpop != nil && o.dpop.required {
				// No credential of the one scheme accepted: a challenge
				// without an error code (RFC 6750 section 3.1).
				deny(schemeNone, ErrDPoPRequired)
				return
			}
			var (
				p    ports.Principal
				conf Confirmation
			)
			if bound != nil {
				p, conf, err = bound.VerifyBound(r.Context(), token)
			} else {
				p, err = v.Verify(r.Context(), token)
			}
			if err == nil && (!p.Authenticated || p.Subject == "") {
				err = ErrNoPrincipal
			}
			if err == nil && o.dpop != nil {
				err = checkBinding(r, o.dpop, scheme, conf, proofs, token)
			}
			if err != nil {
				deny(scheme, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
		})
	}
}

// checkBinding enforces DPoP on a verified token: a bound token only with
// the DPoP scheme and a valid proof of its key, the DPoP scheme only with a
// bound token.
func checkBinding(r *http.Request, d *DPoP, scheme string, conf Confirmation, proofs []string, token string) error {
	if scheme == schemeBearer {
		if conf.Present {
			return ErrBoundTokenAsBearer
		}
		return nil
	}
	switch {
	case !conf.Present:
		return ErrTokenNotBound
	case conf.JKT == "":
		return ErrUnverifiableBinding
	}
	return d.Check(r.Context(), r, proofs, token, conf.JKT)
}

// credential extracts the scheme and token from exactly one Authorization
// value "<scheme> <token>": Bearer, or DPoP when dpop is on (scheme matched
// case-insensitively, RFC 9110 section 11.1; one space; a b64token per RFC
// 6750 section 2.1, which is RFC 9449's token68). A refused credential's
// scheme is schemeNone when none this server reads was offered.
func credential(values []string, dpop bool) (scheme, token string, err error) {
	switch len(values) {
	case 0:
		return schemeNone, "", ErrMissingToken
	case 1:
	default:
		return schemeAny, "", ErrMalformedAuthorization
	}
	name, rest, found := strings.Cut(values[0], " ")
	switch {
	case strings.EqualFold(name, schemeBearer):
		scheme = schemeBearer
	case dpop && strings.EqualFold(name, schemeDPoP):
		scheme = schemeDPoP
	default:
		return schemeNone, "", ErrMalformedAuthorization
	}
	if !found || !isB64Token(rest) {
		return scheme, "", ErrMalformedAuthorization
	}
	return scheme, rest, nil
}

// errorCode is the challenge error code for err presented under scheme:
// none when no credential of a readable scheme was offered (RFC 6750
// section 3.1), invalid_dpop_proof for a refused proof, invalid_token
// otherwise.
func errorCode(scheme string, err error) string {
	var e *Error
	switch {
	case scheme == schemeNone:
		return ""
	case errors.As(err, &e) && strings.HasPrefix(e.reason, "dpop_") && !tokenErrors[e]:
		return "invalid_dpop_proof"
	}
	return "invalid_token"
}

// challenges renders the WWW-Authenticate values for one mode.
type challenges struct {
	metadata string // the resource_metadata parameter, ready to append
	bearer   bool   // Bearer is accepted
	dpopAlgs string // the DPoP algs parameter; "" when DPoP is off
}

func newChallenges(resourceMetadataURL string, d *DPoP) challenges {
	c := challenges{metadata: `resource_metadata="` + resourceMetadataURL + `"`, bearer: d == nil || !d.required}
	if d != nil {
		c.dpopAlgs = `algs="` + strings.Join(d.Algorithms(), " ") + `"`
	}
	return c
}

// render returns one challenge per accepted scheme, the error code on the
// scheme the credential was presented under (on every one for schemeAny).
func (c challenges) render(scheme, code string) []string {
	codeFor := func(s string) string {
		if scheme == s || scheme == schemeAny {
			return code
		}
		return ""
	}
	var out []string
	if c.bearer {
		out = append(out, challenge(schemeBearer, codeFor(schemeBearer), c.metadata))
	}
	if c.dpopAlgs != "" {
		out = append(out, challenge(schemeDPoP, codeFor(schemeDPoP), c.dpopAlgs+", "+c.metadata))
	}
	return out
}

func challenge(scheme, code, params string) string {
	if code == "" {
		return scheme + " " + params
	}
	return scheme + ` error="` + code + `", ` + params
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

// withoutCredentials returns a shallow copy of r whose header map is a
// copy without Authorization and DPoP; the inbound request is left
// untouched.
func withoutCredentials(r *http.Request) *http.Request {
	h := r.Header.Clone()
	h.Del("Authorization")
	h.Del("DPoP")
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

// unauthorizedBody is the fixed 401 body for a challenge error code; it
// never carries the caller's input.
func unauthorizedBody(code string) errorBody {
	switch code {
	case "invalid_token":
		return errorBody{Error: "invalid_token", ErrorDescription: "the bearer token was not accepted"}
	case "invalid_dpop_proof":
		return errorBody{Error: "invalid_dpop_proof", ErrorDescription: "the DPoP proof was not accepted"}
	}
	return errorBody{Error: "unauthorized", ErrorDescription: "an access token is required"}
}
