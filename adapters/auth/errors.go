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
)

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
