package auth

import "errors"

// Error is a refusal with a fixed, machine-readable reason. Its text never
// carries the token, a claim value or a key id, so it is safe to log and to
// put in an audit line.
type Error struct {
	reason string
	text   string
}

// Error returns the fixed refusal text.
func (e *Error) Error() string { return "auth: " + e.text }

// Reason returns the stable reason code (snake_case) for audit lines and
// metrics.
func (e *Error) Reason() string { return e.reason }

// Refusal reasons. Each sentinel is returned as is (compare with errors.Is);
// configuration-time errors from NewVerifier may wrap ErrKeysUnavailable
// with a fixed description.
var (
	// ErrMissingToken: the request carried no Authorization header.
	ErrMissingToken = &Error{"missing_token", "bearer token missing"}
	// ErrMalformedAuthorization: the Authorization header was not exactly
	// one "Bearer <token>" value.
	ErrMalformedAuthorization = &Error{"malformed_authorization", "authorization header malformed"}
	// ErrMalformedToken: not a compact JWS, or its header could not be read.
	ErrMalformedToken = &Error{"malformed_token", "token malformed"}
	// ErrTokenTooLarge: the token exceeds MaxTokenBytes; it was not parsed.
	ErrTokenTooLarge = &Error{"token_too_large", "token too large"}
	// ErrAlgorithmNotAllowed: alg is none, HMAC, or anything outside the
	// pinned asymmetric list.
	ErrAlgorithmNotAllowed = &Error{"algorithm_not_allowed", "signing algorithm not allowed"}
	// ErrTokenType: the typ header names something other than a JWT
	// access token, or is absent where at+jwt is required.
	ErrTokenType = &Error{"wrong_token_type", "token type not accepted"}
	// ErrKeyMismatch: the key the token names cannot verify its alg (an
	// RS256 token against an EC key, or a JWK pinned to another alg).
	ErrKeyMismatch = &Error{"key_mismatch", "signing algorithm does not match the key"}
	// ErrUnknownKey: no key with the token's kid, even after the refetch
	// the floor allowed.
	ErrUnknownKey = &Error{"unknown_key", "signing key unknown"}
	// ErrKeysUnavailable: the key set could not be fetched.
	ErrKeysUnavailable = &Error{"keys_unavailable", "signing keys unavailable"}
	// ErrBadSignature: the signature does not verify.
	ErrBadSignature = &Error{"bad_signature", "signature invalid"}
	// ErrMalformedClaims: the payload is not a JSON claim set of the
	// expected shape.
	ErrMalformedClaims = &Error{"malformed_claims", "token claims malformed"}
	// ErrWrongIssuer: iss is missing or is not the configured issuer.
	ErrWrongIssuer = &Error{"wrong_issuer", "issuer not accepted"}
	// ErrWrongAudience: aud is missing or does not name this server.
	ErrWrongAudience = &Error{"wrong_audience", "audience not accepted"}
	// ErrMissingExpiry: exp is absent.
	ErrMissingExpiry = &Error{"missing_exp", "expiry missing"}
	// ErrExpired: exp has passed (beyond the acceptable skew).
	ErrExpired = &Error{"expired", "token expired"}
	// ErrNotYetValid: nbf is in the future (beyond the acceptable skew).
	ErrNotYetValid = &Error{"not_yet_valid", "token not yet valid"}
	// ErrIssuedInFuture: iat is in the future (beyond the acceptable skew).
	ErrIssuedInFuture = &Error{"issued_in_future", "token issued in the future"}
	// ErrMissingSubject: sub is absent, empty, or not a printable identifier.
	ErrMissingSubject = &Error{"missing_sub", "subject missing or invalid"}
	// ErrNoPrincipal: a TokenVerifier returned no error but no
	// authenticated principal either; the middleware fails closed.
	ErrNoPrincipal = &Error{"no_principal", "verifier returned no principal"}

	// DPoP (RFC 9449) refusals. The token ones are reported with
	// error="invalid_token", the proof ones with "invalid_dpop_proof".

	// ErrDPoPRequired: a Bearer token where DPoP is required.
	ErrDPoPRequired = &Error{"dpop_required", "a DPoP-bound token is required"}
	// ErrBoundTokenAsBearer: a token bound with cnf presented as Bearer.
	ErrBoundTokenAsBearer = &Error{"dpop_bound_token_as_bearer", "a DPoP-bound token was presented as a bearer token"}
	// ErrTokenNotBound: the DPoP scheme with a token that has no cnf.
	ErrTokenNotBound = &Error{"dpop_token_not_bound", "the token is not DPoP-bound"}
	// ErrUnverifiableBinding: a cnf without a well-formed jkt (another
	// confirmation method, or a malformed one).
	ErrUnverifiableBinding = &Error{"dpop_binding_unverifiable", "the token's key binding cannot be checked"}
	// ErrDPoPKeyBinding: the proof's key is not the one cnf.jkt names.
	ErrDPoPKeyBinding = &Error{"dpop_key_mismatch", "the DPoP proof key does not match the token binding"}
	// ErrDPoPProofMissing: the DPoP scheme without a DPoP header.
	ErrDPoPProofMissing = &Error{"dpop_proof_missing", "DPoP proof missing"}
	// ErrDPoPProofMalformed: more than one DPoP header, an oversized or
	// unparsable proof, a critical header, or a missing or malformed iat
	// or jti.
	ErrDPoPProofMalformed = &Error{"dpop_proof_malformed", "DPoP proof malformed"}
	// ErrDPoPProofType: typ is not dpop+jwt.
	ErrDPoPProofType = &Error{"dpop_proof_type", "DPoP proof type not accepted"}
	// ErrDPoPAlgorithm: alg is none, HMAC, or outside the pinned list.
	ErrDPoPAlgorithm = &Error{"dpop_algorithm_not_allowed", "DPoP proof algorithm not allowed"}
	// ErrDPoPKey: no jwk header, a private or symmetric key, or one that
	// does not fit alg.
	ErrDPoPKey = &Error{"dpop_key_invalid", "DPoP proof key not usable"}
	// ErrDPoPSignature: the proof's signature does not verify with its key.
	ErrDPoPSignature = &Error{"dpop_bad_signature", "DPoP proof signature invalid"}
	// ErrDPoPMethod: htm is missing or is not the request's method.
	ErrDPoPMethod = &Error{"dpop_htm_mismatch", "DPoP proof is for another method"}
	// ErrDPoPURL: htu is missing or is not the request's URL.
	ErrDPoPURL = &Error{"dpop_htu_mismatch", "DPoP proof is for another URL"}
	// ErrDPoPStale: iat is older than the window.
	ErrDPoPStale = &Error{"dpop_iat_stale", "DPoP proof too old"}
	// ErrDPoPFuture: iat is further ahead than the window.
	ErrDPoPFuture = &Error{"dpop_iat_future", "DPoP proof issued in the future"}
	// ErrDPoPTokenHash: ath is missing or is not the presented token's.
	ErrDPoPTokenHash = &Error{"dpop_ath_mismatch", "DPoP proof is for another access token"}
	// ErrDPoPReplay: the proof's jti was already used.
	ErrDPoPReplay = &Error{"dpop_replay", "DPoP proof already used"}
	// ErrDPoPReplayUnavailable: the replay store could not answer; the
	// proof is refused (fail closed) with 503.
	ErrDPoPReplayUnavailable = &Error{"dpop_replay_store_unavailable", "DPoP replay store unavailable"}
)

// tokenErrors are the DPoP refusals reported as invalid_token: the token,
// or its binding to the proof's key, is at fault, not the proof itself
// (RFC 9449 section 7.1).
var tokenErrors = map[*Error]bool{
	ErrBoundTokenAsBearer: true, ErrTokenNotBound: true, ErrUnverifiableBinding: true, ErrDPoPKeyBinding: true,
}

// ReasonInvalidToken is the reason reported for an error that is not one of
// this package's refusals.
const ReasonInvalidToken = "invalid_token"

// ReasonOf returns the stable reason code of err: the Reason of the *Error
// it wraps, or ReasonInvalidToken for any other error.
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.reason
	}
	return ReasonInvalidToken
}
