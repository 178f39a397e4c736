package auth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"github.com/arrowhead-go/arrowhead/ports"
)

// DPoP modes (ARROWHEAD_OAUTH_DPOP).
const (
	// DPoPOff verifies bearer tokens only, as a resource server that does
	// not implement RFC 9449 does: a token's cnf claim is not looked at, so
	// a DPoP-bound token is accepted as a bearer token, and the DPoP
	// scheme is refused as an unknown one.
	DPoPOff = "off"
	// DPoPAllowed accepts "Authorization: DPoP" with a proof, and still
	// accepts unbound bearer tokens; a token bound with cnf.jkt must come
	// with a valid proof (as Bearer it is refused).
	DPoPAllowed = "allowed"
	// DPoPRequired accepts only DPoP-bound tokens with a valid proof.
	DPoPRequired = "required"
)

// DPoP limits and defaults.
const (
	// DefaultDPoPWindow is how far a proof's iat may lie from the server's
	// clock, either way (ARROWHEAD_OAUTH_DPOP_WINDOW). A proof is made
	// for one request, so a minute absorbs clock skew and latency while
	// keeping a captured proof's usable life, and the replay store's
	// memory of its jti, short.
	DefaultDPoPWindow = 60 * time.Second
	// MinDPoPWindow and MaxDPoPWindow bound the window a DPoPConfig may set.
	MinDPoPWindow = time.Second
	MaxDPoPWindow = 5 * time.Minute
	// MaxDPoPProofBytes caps a DPoP header; a longer one is refused
	// unparsed. A proof carrying a 4096-bit RSA key is under 2 KiB.
	MaxDPoPProofBytes = 8 << 10
	// MaxJTIBytes caps a proof's jti.
	MaxJTIBytes = 256
	// dpopReplayMargin keeps a jti a little beyond the instant its proof
	// leaves the window, so clock granularity cannot reopen it.
	dpopReplayMargin = time.Second
	// maxIAT is the largest iat read (year 2242), far beyond any window
	// and small enough to count in nanoseconds.
	maxIAT = 1 << 33
	// thumbprintLen is the length of a base64url (unpadded) SHA-256.
	thumbprintLen = 43
)

// dpopAlgs is the DPoP proof algorithm list, in the order it is advertised
// (RFC 9449 section 5.1, dpop_signing_alg_values_supported, and the algs
// challenge parameter). It is exactly allowedAlgs: none, every HMAC alg and
// anything else are refused before a key is looked at.
var dpopAlgs = []jwa.SignatureAlgorithm{
	jwa.ES256, jwa.ES384, jwa.ES512, jwa.EdDSA,
	jwa.PS256, jwa.PS384, jwa.PS512, jwa.RS256, jwa.RS384, jwa.RS512,
}

// Confirmation is what an access token says about the key it is bound to:
// its cnf claim (RFC 7800).
type Confirmation struct {
	// JKT is the cnf.jkt member, the base64url SHA-256 JWK thumbprint of
	// the key a DPoP-bound token is bound to (RFC 9449 section 6.1); ""
	// when the token has none.
	JKT string
	// Present reports whether the token has a cnf claim at all. A cnf
	// without a well-formed jkt (a certificate binding, or a malformed
	// member) is Present with JKT "": a binding this server cannot check.
	Present bool
}

// BoundVerifier is a TokenVerifier that also reports a token's
// confirmation; DPoP needs one. *Verifier is one.
type BoundVerifier interface {
	TokenVerifier
	VerifyBound(ctx context.Context, token string) (ports.Principal, Confirmation, error)
}

// confirmationOf reads tok's cnf claim.
func confirmationOf(tok jwt.Token) Confirmation {
	raw, ok := tok.Get("cnf")
	if !ok {
		return Confirmation{}
	}
	c := Confirmation{Present: true}
	if m, isObject := raw.(map[string]any); isObject {
		if jkt, isString := m["jkt"].(string); isString && isThumbprint(jkt) {
			c.JKT = jkt
		}
	}
	return c
}

// isThumbprint reports whether s is a base64url (unpadded) SHA-256 value.
func isThumbprint(s string) bool {
	if len(s) != thumbprintLen {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}

// DPoPConfig configures DPoP proof checking at the resource server.
type DPoPConfig struct {
	// Mode is DPoPOff (or ""), DPoPAllowed or DPoPRequired.
	Mode string
	// PublicURL is the server's public base URL
	// (ARROWHEAD_SERVER_PUBLIC_URL). A proof's htu is compared with it
	// followed by the request path, never with the Host header, so behind
	// a proxy the URL the client used is the one checked.
	PublicURL string
	// Replay remembers each proof's jti so a second use is refused; with
	// the Redis rate store it holds across replicas. Required.
	Replay ports.ReplayGuard
	// Window is how far a proof's iat may lie from now, either way
	// (DefaultDPoPWindow when zero).
	Window time.Duration
	// Clock tells the time for the iat check; nil is time.Now.
	Clock func() time.Time
}

// DPoP checks DPoP proofs (RFC 9449) for Middleware and describes the mode
// for ProtectedResourceHandler. It is safe for concurrent use.
//
// Server-provided nonces (RFC 9449 section 9) are not issued: a proof's
// freshness rests on its iat window and its single-use jti.
type DPoP struct {
	required bool
	base     string // the normalised public URL without a trailing slash
	replay   ports.ReplayGuard
	window   time.Duration
	clock    func() time.Time
}

// NewDPoP checks cfg and returns the proof checker for its mode, or nil
// (and no error) when the mode is off: a nil *DPoP is DPoP off wherever one
// is accepted.
func NewDPoP(cfg DPoPConfig) (*DPoP, error) {
	d := &DPoP{replay: cfg.Replay, window: cfg.Window, clock: cfg.Clock}
	switch cfg.Mode {
	case DPoPOff, "":
		return nil, nil
	case DPoPAllowed:
	case DPoPRequired:
		d.required = true
	default:
		return nil, errors.New(`auth: DPoP mode must be "off", "allowed" or "required"`)
	}
	if d.replay == nil {
		return nil, errors.New("auth: DPoP needs a replay store for proof ids")
	}
	u, err := url.Parse(cfg.PublicURL)
	if err != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("auth: DPoP needs the server's public URL, without query or fragment")
	}
	base, ok := normalizeHTU(cfg.PublicURL)
	if !ok {
		return nil, errors.New("auth: DPoP needs the server's public URL as an absolute http(s) URL")
	}
	d.base = strings.TrimRight(base, "/")
	if d.window == 0 {
		d.window = DefaultDPoPWindow
	}
	if d.window < MinDPoPWindow || d.window > MaxDPoPWindow {
		return nil, errors.New("auth: the DPoP window must be between 1s and 5m")
	}
	if d.clock == nil {
		d.clock = time.Now
	}
	return d, nil
}

// Required reports whether every token must be DPoP-bound.
func (d *DPoP) Required() bool { return d.required }

// Algorithms returns the proof signature algorithms accepted.
func (d *DPoP) Algorithms() []string {
	out := make([]string, len(dpopAlgs))
	for i, a := range dpopAlgs {
		out[i] = a.String()
	}
	return out
}

// proofClaims are the members of a proof's claim set that are checked.
// Pointers tell a missing member from an empty one; iat as a float64
// refuses a numeric string.
type proofClaims struct {
	HTM *string  `json:"htm"`
	HTU *string  `json:"htu"`
	IAT *float64 `json:"iat"`
	JTI *string  `json:"jti"`
	ATH *string  `json:"ath"`
}

// Check verifies the DPoP proof of r (RFC 9449 section 4.3, with the
// resource-server checks of section 7.1) for the access token token bound
// to the key thumbprint jkt, and records its jti. proofs are the request's
// DPoP header values. Every error is one of this package's sentinels and
// never carries a header, claim or key value.
func (d *DPoP) Check(ctx context.Context, r *http.Request, proofs []string, token, jkt string) error {
	if len(proofs) == 0 {
		return ErrDPoPProofMissing
	}
	// Exactly one proof (section 4.3, check 1).
	if len(proofs) != 1 || len(proofs[0]) > MaxDPoPProofBytes || !isCompactJWS(proofs[0]) {
		return ErrDPoPProofMalformed
	}
	proof := []byte(proofs[0])
	msg, err := jws.Parse(proof, jws.WithCompact())
	if err != nil || len(msg.Signatures()) != 1 {
		return ErrDPoPProofMalformed
	}
	sig := msg.Signatures()[0]
	hdr := sig.ProtectedHeaders()
	// typ dpop+jwt (check 4) keeps any other JWT, an access token
	// included, from passing as a proof (section 11.5).
	if !isDPoPType(hdr.Type()) {
		return ErrDPoPProofType
	}
	// An asymmetric algorithm from the pinned list (check 5, section
	// 11.6): none and HMAC, whose "key" the jwk header would hand over,
	// never reach a key.
	alg := hdr.Algorithm()
	if !allowedAlgs[alg] {
		return ErrDPoPAlgorithm
	}
	if len(hdr.Critical()) > 0 || len(sig.Signature()) == 0 {
		return ErrDPoPProofMalformed
	}
	// A public key in jwk (check 7): never private material, never a
	// symmetric key, and of a type and size that fits alg.
	key := hdr.JWK()
	if key == nil {
		return ErrDPoPKey
	}
	if private, err := jwk.IsPrivateKey(key); err != nil || private {
		return ErrDPoPKey
	}
	vk, ok := keyFromJWK(key)
	if !ok || !vk.fits(alg) {
		return ErrDPoPKey
	}
	// The signature verifies with that key (check 6), over the signing
	// input as received; the message is already parsed, so it is checked
	// directly rather than parsed a second time by jws.Verify.
	verifier, err := jws.NewVerifier(alg)
	if err != nil || verifier.Verify(proof[:bytes.LastIndexByte(proof, '.')], sig.Signature(), vk.key) != nil {
		return ErrDPoPSignature
	}
	var c proofClaims
	if json.Unmarshal(msg.Payload(), &c) != nil {
		return ErrDPoPProofMalformed
	}
	// htm and htu bind the proof to this request (checks 8 and 9,
	// section 11.7); htu is compared after RFC 3986 normalisation.
	if c.HTM == nil || *c.HTM != r.Method {
		return ErrDPoPMethod
	}
	if c.HTU == nil || !d.htuMatches(*c.HTU, r) {
		return ErrDPoPURL
	}
	// iat within the window (check 11, sections 11.1 and 11.2).
	if c.IAT == nil {
		return ErrDPoPProofMalformed
	}
	// Range first, so the conversion to nanoseconds cannot overflow.
	if *c.IAT < 0 || *c.IAT > maxIAT {
		return ErrDPoPStale
	}
	now := d.clock()
	iat := time.Unix(0, int64(*c.IAT*float64(time.Second)))
	if iat.Before(now.Add(-d.window)) {
		return ErrDPoPStale
	}
	if iat.After(now.Add(d.window)) {
		return ErrDPoPFuture
	}
	if c.JTI == nil || *c.JTI == "" || len(*c.JTI) > MaxJTIBytes {
		return ErrDPoPProofMalformed
	}
	// ath binds the proof to this access token (check 12, section 7): a
	// resource server must check it, so a proof without one is refused.
	if c.ATH == nil || *c.ATH != tokenHash(token) {
		return ErrDPoPTokenHash
	}
	// The proof's key is the one the token is bound to (section 6.1,
	// section 11.8).
	tp, err := key.Thumbprint(crypto.SHA256)
	if err != nil || base64.RawURLEncoding.EncodeToString(tp) != jkt {
		return ErrDPoPKeyBinding
	}
	// Last, once everything else holds, so refused proofs cost the store
	// nothing: the jti is single-use for as long as the proof could pass
	// the iat check. It is scoped by the key, so one client cannot spend
	// another's ids.
	ttl := iat.Add(d.window).Sub(now) + dpopReplayMargin
	first, err := d.replay.FirstSeen(ctx, "dpop\x00"+jkt+"\x00"+*c.JTI, ttl)
	if err != nil {
		return ErrDPoPReplayUnavailable
	}
	if !first {
		return ErrDPoPReplay
	}
	return nil
}

// isDPoPType reports whether typ names a DPoP proof: dpop+jwt, compared
// as a media type (case-insensitively, "application/" optional).
func isDPoPType(typ string) bool {
	return strings.EqualFold(strings.TrimPrefix(strings.ToLower(typ), "application/"), "dpop+jwt")
}

// tokenHash is ath for token: the base64url SHA-256 of its ASCII bytes.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// htuMatches compares a proof's htu with the URL of r as the client saw it:
// the public URL followed by the request path, both normalised, query and
// fragment ignored.
func (d *DPoP) htuMatches(htu string, r *http.Request) bool {
	got, ok := normalizeHTU(htu)
	if !ok {
		return false
	}
	want, ok := normalizeHTU(d.base + r.URL.EscapedPath())
	return ok && got == want
}

// normalizeHTU returns the http(s) URL s without query and fragment,
// normalised as RFC 9449 section 4.3 asks (RFC 3986 sections 6.2.2 and
// 6.2.3): scheme and host lower-cased, the scheme's default port dropped,
// percent-encoding normalised, dot segments removed, an empty path made
// "/". ok is false for anything but an absolute http(s) URL with a host
// and no user information.
func normalizeHTU(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.User != nil || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", false
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port := u.Port(); port != "" && !(scheme == "https" && port == "443" || scheme == "http" && port == "80") {
		host += ":" + port
	}
	p, ok := normalizePercent(u.EscapedPath())
	if !ok {
		return "", false
	}
	p = removeDotSegments(p)
	if p == "" {
		p = "/"
	}
	return scheme + "://" + host + p, true
}

// normalizePercent decodes percent-encoded unreserved characters and
// upper-cases the hex digits of the rest (RFC 3986 section 6.2.2.1 and
// 6.2.2.2).
func normalizePercent(p string) (string, bool) {
	if !strings.Contains(p, "%") {
		return p, true
	}
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			b.WriteByte(p[i])
			continue
		}
		if i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2]) {
			return "", false
		}
		c := unhex(p[i+1])<<4 | unhex(p[i+2])
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteString(strings.ToUpper(p[i+1 : i+3]))
		}
		i += 2
	}
	return b.String(), true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// removeDotSegments is RFC 3986 section 5.2.4.
func removeDotSegments(in string) string {
	if !strings.Contains(in, ".") {
		return in
	}
	var out []string // output segments, each with its leading "/"
	for in != "" {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "/..":
			in = "/"
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "." || in == "..":
			in = ""
		default:
			start := 0
			if in[0] == '/' {
				start = 1
			}
			end := strings.IndexByte(in[start:], '/')
			if end < 0 {
				end = len(in)
			} else {
				end += start
			}
			out = append(out, in[:end])
			in = in[end:]
		}
	}
	return strings.Join(out, "")
}
