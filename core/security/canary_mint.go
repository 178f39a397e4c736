package security

import (
	"crypto/rand"
	"fmt"
	"io"
)

// MintedCanaries are honeytokens shaped like what an intruder hunts for,
// ready to plant: Lines go into a document, repository or database; Tokens
// are the values to list in ARROWHEAD_CANARY_TOKENS (or the canary file).
type MintedCanaries struct {
	Lines  []string
	Tokens []string
}

const (
	awsIDAlphabet     = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	awsSecretAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+"
	wordAlphabet      = "abcdefghijklmnopqrstuvwxyz0123456789"
	passwordAlphabet  = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789!^*-_"
)

// MintCanaries mints an AWS-shaped access key pair, an internal-looking
// URL on host and a password line, drawing randomness from r (nil is
// crypto/rand).
func MintCanaries(r io.Reader, host string) (MintedCanaries, error) {
	if r == nil {
		r = rand.Reader
	}
	if host == "" {
		host = "wiki.internal.example.com"
	}
	var m MintedCanaries
	draw := func(alphabet string, n int) (string, error) {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", fmt.Errorf("reading randomness: %w", err)
		}
		// Rejection-free modulo: every alphabet here has a length that
		// divides 256 or is used where a slight bias does not matter (a
		// decoy, not a key).
		for i, b := range buf {
			buf[i] = alphabet[int(b)%len(alphabet)]
		}
		return string(buf), nil
	}
	id, err := draw(awsIDAlphabet, 16)
	if err != nil {
		return m, err
	}
	secret, err := draw(awsSecretAlphabet, 40)
	if err != nil {
		return m, err
	}
	slug, err := draw(wordAlphabet, 24)
	if err != nil {
		return m, err
	}
	password, err := draw(passwordAlphabet, 20)
	if err != nil {
		return m, err
	}
	keyID := "AKIA" + id
	url := "https://" + host + "/share/" + slug
	m.Lines = []string{
		"aws_access_key_id = " + keyID,
		"aws_secret_access_key = " + secret,
		"# backup runbook: " + url,
		"DB_PASSWORD=" + password,
	}
	m.Tokens = []string{keyID, secret, url, password}
	return m, nil
}
