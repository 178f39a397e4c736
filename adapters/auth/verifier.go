// Package auth is the OAuth 2.1 resource-server adapter: it verifies bearer
// JWTs (signature against the issuer's JWKS or a static public key, issuer,
// audience, expiry, not-before, subject), turns them into ports.Principal
// values, guards the HTTP endpoint with a 401 that points at the RFC 9728
// metadata, and serves that metadata. It never issues tokens and never
// forwards one.
package auth

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Named limits and defaults.
const (
	// MaxTokenBytes caps a bearer token; a longer one is refused unparsed.
	MaxTokenBytes = 16 << 10
	// DefaultMinRefetchInterval is the floor on JWKS refetches.
	DefaultMinRefetchInterval = 30 * time.Second
	// MinMinRefetchInterval is the smallest floor a Config may set.
	MinMinRefetchInterval = time.Second
	// DefaultKeySetMaxAge is how long a fetched key set serves before a
	// background refresh picks up removed (revoked) keys.
	DefaultKeySetMaxAge = time.Hour
	// DefaultMaxJWKSBytes caps the JWKS response body.
	DefaultMaxJWKSBytes = 256 << 10
	// DefaultFetchTimeout bounds one JWKS fetch.
	DefaultFetchTimeout = 10 * time.Second
	// DefaultAcceptableSkew is the clock skew allowed on exp, nbf and iat.
	DefaultAcceptableSkew = 30 * time.Second
	// MaxAcceptableSkew is the largest skew a Config may set.
	MaxAcceptableSkew = 5 * time.Minute
	// MaxPublicKeyFileBytes caps a PEM file read from disk.
	MaxPublicKeyFileBytes = 64 << 10
	// MaxSubjectBytes caps the sub claim.
	MaxSubjectBytes = 512
)

// Config configures a Verifier. Exactly one key source is set: JWKSURI
// (preferred) or PublicKeyPEM. Zero durations and sizes select the
// Default* constants.
type Config struct {
	// Issuer is the exact iss every token must carry.
	Issuer string
	// Audience must appear in every token's aud (mandatory).
	Audience string

	// JWKSURI is the issuer's key set URL (https; http only for loopback).
	JWKSURI string
	// PublicKeyPEM is a static public key: PEM text, or the path of a PEM
	// file. Literal "\n" sequences in single-line text are read as newlines.
	PublicKeyPEM string

	// HTTPClient fetches the JWKS. It is copied and the copy never follows
	// redirects, keeps no cookies and times out; nil uses a fresh client.
	HTTPClient *http.Client
	// MinRefetchInterval is the floor on JWKS refetch frequency, whatever
	// kids tokens name (at least MinMinRefetchInterval).
	MinRefetchInterval time.Duration
	// KeySetMaxAge is how long a key set serves before it is refreshed in
	// the background.
	KeySetMaxAge time.Duration
	// MaxJWKSBytes caps the JWKS response body.
	MaxJWKSBytes int64
	// FetchTimeout bounds one JWKS fetch.
	FetchTimeout time.Duration

	// Clock tells the time for claim checks and the refetch floor.
	Clock func() time.Time
	// AcceptableSkew is the clock skew allowed on exp, nbf and iat (at most
	// MaxAcceptableSkew).
	AcceptableSkew time.Duration

	// ScopeClaim names the one claim scopes are read from: ScopeClaimScope
	// (the default) or ScopeClaimSCP. The other claim is ignored, so two
	// claims can never add up to more than either grants.
	ScopeClaim string
	// RequireAccessTokenType accepts only tokens whose typ header says
	// at+jwt (RFC 9068 section 2.1); without it typ may also be absent or
	// JWT.
	RequireAccessTokenType bool
}

// Scope claims a Config may name.
const (
	// ScopeClaimScope is RFC 9068's "scope": one space-delimited string.
	ScopeClaimScope = "scope"
	// ScopeClaimSCP is "scp", used by some IdPs: a space-delimited string
	// or an array of strings.
	ScopeClaimSCP = "scp"
)

// Verifier verifies bearer JWTs for one issuer and audience. It is safe for
// concurrent use.
type Verifier struct {
	issuer     string
	audience   string
	skew       time.Duration
	clock      func() time.Time
	scopeClaim string
	requireAT  bool

	static *verificationKey // set for a static key
	jwks   *jwksCache       // set for a JWKS
}

var (
	_ BoundVerifier        = (*Verifier)(nil)
	_ ports.HealthReporter = (*Verifier)(nil)
)

// NewVerifier checks cfg and loads the key source. With a JWKS it fetches
// the key set once under ctx and fails if that fetch fails, so a wrong URI
// is found at start-up rather than at the first request.
func NewVerifier(ctx context.Context, cfg Config) (*Verifier, error) {
	if strings.TrimSpace(cfg.Issuer) == "" {
		return nil, errors.New("auth: an issuer is required")
	}
	if strings.TrimSpace(cfg.Audience) == "" {
		return nil, errors.New("auth: an audience is required")
	}
	if (cfg.JWKSURI == "") == (cfg.PublicKeyPEM == "") {
		return nil, errors.New("auth: exactly one key source is required: JWKSURI or PublicKeyPEM")
	}
	v := &Verifier{
		issuer:     cfg.Issuer,
		audience:   cfg.Audience,
		skew:       orDefault(cfg.AcceptableSkew, DefaultAcceptableSkew),
		clock:      cfg.Clock,
		scopeClaim: cfg.ScopeClaim,
		requireAT:  cfg.RequireAccessTokenType,
	}
	switch v.scopeClaim {
	case "":
		v.scopeClaim = ScopeClaimScope
	case ScopeClaimScope, ScopeClaimSCP:
	default:
		return nil, errors.New(`auth: ScopeClaim must be "scope" or "scp"`)
	}
	if v.clock == nil {
		v.clock = time.Now
	}
	if v.skew < 0 || v.skew > MaxAcceptableSkew {
		return nil, errors.New("auth: AcceptableSkew must be between 0 and 5m")
	}

	if cfg.PublicKeyPEM != "" {
		pub, err := loadPublicKey(cfg.PublicKeyPEM)
		if err != nil {
			return nil, err
		}
		v.static = &verificationKey{key: pub}
		return v, nil
	}

	if err := checkJWKSURI(cfg.JWKSURI); err != nil {
		return nil, err
	}
	floor := orDefault(cfg.MinRefetchInterval, DefaultMinRefetchInterval)
	if floor < MinMinRefetchInterval {
		return nil, errors.New("auth: MinRefetchInterval must be at least 1s")
	}
	maxAge := orDefault(cfg.KeySetMaxAge, DefaultKeySetMaxAge)
	if maxAge < floor {
		return nil, errors.New("auth: KeySetMaxAge must not be shorter than MinRefetchInterval")
	}
	timeout := orDefault(cfg.FetchTimeout, DefaultFetchTimeout)
	if timeout < 0 {
		return nil, errors.New("auth: FetchTimeout must be positive")
	}
	maxBytes := orDefault(cfg.MaxJWKSBytes, DefaultMaxJWKSBytes)
	if maxBytes < 0 {
		return nil, errors.New("auth: MaxJWKSBytes must be positive")
	}
	v.jwks = &jwksCache{
		uri:      cfg.JWKSURI,
		client:   jwksClient(cfg.HTTPClient, timeout),
		maxBytes: maxBytes,
		timeout:  timeout,
		floor:    floor,
		maxAge:   maxAge,
		clock:    v.clock,
	}
	if err := v.jwks.load(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

func orDefault[T time.Duration | int64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// loadPublicKey reads the static key from PEM text or a PEM file. Errors
// never quote the path or the file's content.
func loadPublicKey(src string) (crypto.PublicKey, error) {
	var text []byte
	if strings.Contains(src, "-----BEGIN ") {
		text = []byte(src)
	} else {
		data, err := readCapped(src, MaxPublicKeyFileBytes)
		if err != nil {
			return nil, err
		}
		text = data
	}
	return parsePublicKeyPEM(unescapeNewlines(bytes.TrimSpace(text)))
}

func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("auth: public key file not found")
	case errors.Is(err, fs.ErrPermission):
		return nil, errors.New("auth: public key file not readable")
	case err != nil:
		return nil, errors.New("auth: public key file could not be opened")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, errors.New("auth: public key file could not be read")
	}
	if int64(len(data)) > limit {
		return nil, errors.New("auth: public key file is too large")
	}
	return data, nil
}

// Name identifies the key source in readiness reports.
func (v *Verifier) Name() string { return "oauth_keys" }

// Health reports the key source's readiness: a static key is always ready;
// a JWKS is degraded while cached keys serve after a failed refresh.
func (v *Verifier) Health(context.Context) ports.HealthState {
	if v.jwks == nil {
		return ports.HealthOK
	}
	ok, hasKeys := v.jwks.health()
	switch {
	case ok && hasKeys:
		return ports.HealthOK
	case hasKeys:
		return ports.HealthDegraded
	}
	return ports.HealthDown
}

// Verify checks token and returns the principal it vouches for. Every
// error is one of this package's sentinels; none carries the token, a
// claim value or a key id. A key binding (cnf) is not looked at: see
// VerifyBound.
func (v *Verifier) Verify(ctx context.Context, token string) (ports.Principal, error) {
	p, _, err := v.VerifyBound(ctx, token)
	return p, err
}

// VerifyBound is Verify that also returns the token's confirmation (its
// cnf claim), for a caller that enforces proof of possession (DPoP).
func (v *Verifier) VerifyBound(ctx context.Context, token string) (ports.Principal, Confirmation, error) {
	if len(token) > MaxTokenBytes {
		return ports.Principal{}, Confirmation{}, ErrTokenTooLarge
	}
	if !isCompactJWS(token) {
		return ports.Principal{}, Confirmation{}, ErrMalformedToken
	}
	msg, err := jws.Parse([]byte(token), jws.WithCompact())
	if err != nil || len(msg.Signatures()) != 1 {
		return ports.Principal{}, Confirmation{}, ErrMalformedToken
	}
	sig := msg.Signatures()[0]
	hdr := sig.ProtectedHeaders()
	alg := hdr.Algorithm()
	if !allowedAlgs[alg] {
		return ports.Principal{}, Confirmation{}, ErrAlgorithmNotAllowed
	}
	// No JWS extension is understood, so a critical one must be refused
	// (RFC 7515 section 4.1.11); a nested JWT is not accepted either.
	if len(hdr.Critical()) > 0 || strings.EqualFold(hdr.ContentType(), "JWT") || len(sig.Signature()) == 0 {
		return ports.Principal{}, Confirmation{}, ErrMalformedToken
	}
	if _, present := hdr.Get(jws.TypeKey); present && !v.typeAccepted(hdr.Type()) ||
		!present && v.requireAT {
		return ports.Principal{}, Confirmation{}, ErrTokenType
	}

	candidates, err := v.keysFor(ctx, hdr.KeyID())
	if err != nil {
		return ports.Principal{}, Confirmation{}, err
	}
	opts := []jws.VerifyOption{jws.WithCompact()}
	for _, k := range candidates {
		if k.fits(alg) {
			opts = append(opts, jws.WithKey(alg, k.key))
		}
	}
	if len(opts) == 1 {
		return ports.Principal{}, Confirmation{}, ErrKeyMismatch
	}
	payload, err := jws.Verify([]byte(token), opts...)
	if err != nil {
		return ports.Principal{}, Confirmation{}, ErrBadSignature
	}
	return v.principal(payload)
}

// keysFor returns the keys that may have signed a token naming kid.
func (v *Verifier) keysFor(ctx context.Context, kid string) ([]verificationKey, error) {
	if v.static != nil {
		// One configured key: a kid names nothing to choose between.
		return []verificationKey{*v.static}, nil
	}
	if kid == "" {
		return nil, ErrUnknownKey
	}
	return v.jwks.lookup(ctx, kid)
}

// principal validates the verified claim set and builds the principal and
// its confirmation.
func (v *Verifier) principal(payload []byte) (ports.Principal, Confirmation, error) {
	p, tok, err := v.claims(payload)
	if err != nil {
		return ports.Principal{}, Confirmation{}, err
	}
	return p, confirmationOf(tok), nil
}

// claims validates the verified claim set and builds the principal.
func (v *Verifier) claims(payload []byte) (ports.Principal, jwt.Token, error) {
	payload = bytes.TrimSpace(payload)
	if len(payload) == 0 || payload[0] != '{' {
		return ports.Principal{}, nil, ErrMalformedClaims
	}
	if !numericDates(payload) {
		return ports.Principal{}, nil, ErrMalformedClaims
	}
	tok, err := jwt.ParseInsecure(payload) // the signature was verified above
	if err != nil {
		return ports.Principal{}, nil, ErrMalformedClaims
	}
	err = jwt.Validate(tok,
		jwt.WithClock(jwt.ClockFunc(v.clock)),
		jwt.WithAcceptableSkew(v.skew),
		jwt.WithRequiredClaim(jwt.ExpirationKey),
		jwt.WithRequiredClaim(jwt.SubjectKey),
		jwt.WithIssuer(v.issuer),
		jwt.WithAudience(v.audience),
	)
	if err != nil {
		return ports.Principal{}, nil, mapValidation(tok, err)
	}
	// jwx treats exp=0 as absent and skips the expiry check; here it is
	// an expiry at the epoch, long past.
	if tok.Expiration().Unix() <= 0 {
		return ports.Principal{}, nil, ErrExpired
	}
	sub := tok.Subject()
	if !validSubject(sub) {
		return ports.Principal{}, nil, ErrMissingSubject
	}
	scopes, err := scopesOf(tok, v.scopeClaim)
	if err != nil {
		return ports.Principal{}, nil, err
	}
	p := ports.NewPrincipal(sub, scopes...)
	// The issuer puts the caller's stored data in a namespace of its own
	// (ports.Principal.Key): a token whose sub names the local operator
	// reaches nothing of the operator's.
	p.Issuer = v.issuer
	return p, tok, nil
}

// mapValidation turns a jwx validation error into a sentinel.
func mapValidation(tok jwt.Token, err error) error {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired()):
		return ErrExpired
	case errors.Is(err, jwt.ErrTokenNotYetValid()):
		return ErrNotYetValid
	case errors.Is(err, jwt.ErrInvalidIssuedAt()):
		return ErrIssuedInFuture
	case errors.Is(err, jwt.ErrInvalidIssuer()):
		return ErrWrongIssuer
	case errors.Is(err, jwt.ErrInvalidAudience()):
		return ErrWrongAudience
	case errors.Is(err, jwt.ErrRequiredClaim()):
		if _, ok := tok.Get(jwt.ExpirationKey); !ok {
			return ErrMissingExpiry
		}
		return ErrMissingSubject
	}
	return ErrMalformedClaims
}

// isCompactJWS reports whether s has the shape header.payload.signature
// with base64url (unpadded) segments; the signature may be empty here so
// that alg "none" is reported as such.
func isCompactJWS(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return false
	}
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			c := p[i]
			if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// validSubject accepts a non-empty, bounded, printable UTF-8 identifier, so
// a subject cannot smuggle control characters into logs or owner keys.
func validSubject(sub string) bool {
	if sub == "" || len(sub) > MaxSubjectBytes || !utf8.ValidString(sub) {
		return false
	}
	for _, r := range sub {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// typeAccepted reports whether a typ header value names a JWT access
// token: at+jwt (RFC 9068), or JWT unless the access-token type is
// required. typ is a media type (RFC 7515 section 4.1.9), so it compares
// case-insensitively and "application/" may be spelled out; parameters or
// any other type (JWE, a JOSE serialization, a logout token) are refused.
func (v *Verifier) typeAccepted(typ string) bool {
	t := strings.ToLower(typ)
	t = strings.TrimPrefix(t, "application/")
	switch t {
	case "at+jwt":
		return true
	case "jwt":
		return !v.requireAT
	}
	return false
}

// numericDates reports whether exp, nbf and iat, where present, are JSON
// numbers, as NumericDate requires (RFC 7519 section 2); jwx would also
// read a numeric string such as "9999999999" as a date.
func numericDates(payload []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(payload, &top) != nil {
		return false
	}
	for _, name := range []string{jwt.ExpirationKey, jwt.NotBeforeKey, jwt.IssuedAtKey} {
		raw, ok := top[name]
		if !ok {
			continue
		}
		if len(raw) == 0 || !(raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9') {
			return false
		}
	}
	return true
}

// scopesOf reads scopes from the one configured claim: "scope" must be a
// space-delimited string (RFC 9068); "scp" may be that or an array of
// strings. Another shape is malformed; an entry that is not an RFC 6749
// scope-token is dropped, which can only narrow what the caller may do.
func scopesOf(tok jwt.Token, claim string) ([]string, error) {
	raw, ok := tok.Get(claim)
	if !ok {
		return nil, nil
	}
	var out []string
	add := func(s string) {
		if isScopeToken(s) {
			out = append(out, s)
		}
	}
	switch s := raw.(type) {
	case string:
		for _, f := range strings.Split(s, " ") {
			add(f)
		}
	case []any:
		if claim != ScopeClaimSCP {
			return nil, ErrMalformedClaims
		}
		for _, e := range s {
			str, isString := e.(string)
			if !isString {
				return nil, ErrMalformedClaims
			}
			add(str)
		}
	default:
		return nil, ErrMalformedClaims
	}
	return out, nil
}

// isScopeToken reports whether s is a scope-token: 1*( %x21 / %x23-5B /
// %x5D-7E ) (RFC 6749 section 3.3).
func isScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
