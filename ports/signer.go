package ports

// Signer signs what the server attests to (the tool-surface manifest, the
// audit log's checkpoints) with the server's one attestation key, so a
// client or an auditor holding the public key can check them offline.
type Signer interface {
	// Sign returns a compact JWS over payload.
	Sign(payload []byte) (string, error)
	// KeyID names the key: its RFC 7638 SHA-256 thumbprint, base64url.
	KeyID() string
	// PublicJWK is the public half as a JSON Web Key (a JSON object).
	PublicJWK() []byte
}
