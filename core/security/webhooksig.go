// This file signs outbound webhook deliveries the Standard Webhooks way
// (https://www.standardwebhooks.com): a receiver that knows the shared
// secret can prove a delivery came from this server, was not altered, and
// is recent. The secret never leaves the process; only the HMAC does.

package security

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks header names.
const (
	WebhookIDHeader        = "webhook-id"
	WebhookTimestampHeader = "webhook-timestamp"
	WebhookSignatureHeader = "webhook-signature"
)

// webhookSecretPrefix marks a Standard Webhooks secret; the rest is the
// base64 key.
const webhookSecretPrefix = "whsec_"

// Bounds on the signing key: shorter keys are guessable, and the spec's
// own generators use 24 to 64 bytes.
const (
	MinWebhookKeyBytes = 24
	MaxWebhookKeyBytes = 64
)

// ErrWebhookSecret is returned for a secret that is not "whsec_" followed by
// the base64 of a 24 to 64-byte key. It never repeats the value.
var ErrWebhookSecret = errors.New("must be whsec_ followed by the base64 encoding of a 24 to 64-byte key")

// WebhookSigner signs deliveries with one secret. It is safe for concurrent
// use.
type WebhookSigner struct {
	key []byte
}

// NewWebhookSigner parses a whsec_ secret.
func NewWebhookSigner(secret string) (*WebhookSigner, error) {
	enc, ok := strings.CutPrefix(secret, webhookSecretPrefix)
	if !ok {
		return nil, ErrWebhookSecret
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(key) < MinWebhookKeyBytes || len(key) > MaxWebhookKeyBytes {
		return nil, ErrWebhookSecret
	}
	return &WebhookSigner{key: key}, nil
}

// Sign returns the three headers for one delivery of body at time now: a
// fresh message id, the Unix timestamp, and "v1," followed by the base64
// HMAC-SHA256 over "id.timestamp.body".
func (s *WebhookSigner) Sign(body []byte, now time.Time) (map[string]string, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, errors.New("no randomness for the webhook id")
	}
	id := "msg_" + hex.EncodeToString(raw[:])
	ts := strconv.FormatInt(now.Unix(), 10)
	return map[string]string{
		WebhookIDHeader:        id,
		WebhookTimestampHeader: ts,
		WebhookSignatureHeader: "v1," + s.signature(id, ts, body),
	}, nil
}

func (s *WebhookSigner) signature(id, ts string, body []byte) string {
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
