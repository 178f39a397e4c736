package catalog

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// InputSeal binds an input request's state to what it was asked for: the
// state is an expiry and a keyed MAC over the parts (caller, tool, the
// exact material), so an answer cannot be replayed by another caller, for
// other material, or after it expired. One key per process; safe for
// concurrent use.
type InputSeal struct {
	key []byte
	ttl time.Duration
}

// NewInputSeal returns a seal with a fresh random key whose states live for
// ttl.
func NewInputSeal(ttl time.Duration) InputSeal {
	key := make([]byte, 32)
	rand.Read(key) // never fails: it ends the process instead
	return InputSeal{key: key, ttl: ttl}
}

// Seal returns the state for parts, valid from now for the seal's ttl.
func (s InputSeal) Seal(now time.Time, parts ...string) string {
	expiry := now.Add(s.ttl).Unix()
	return strconv.FormatInt(expiry, 10) + "." + s.mac(expiry, parts)
}

// Open reports whether state was sealed for exactly parts and has not
// expired at now.
func (s InputSeal) Open(now time.Time, state string, parts ...string) bool {
	expStr, mac, _ := strings.Cut(state, ".")
	expiry, _ := strconv.ParseInt(expStr, 10, 64)
	return s.Live(now, state) && hmac.Equal([]byte(mac), []byte(s.mac(expiry, parts)))
}

// Live reports whether state is shaped as a sealed state whose expiry
// has not passed at now; it says nothing of whose key sealed it.
func (s InputSeal) Live(now time.Time, state string) bool {
	expStr, _, ok := strings.Cut(state, ".")
	expiry, err := strconv.ParseInt(expStr, 10, 64)
	return ok && err == nil && now.Unix() <= expiry
}

func (s InputSeal) mac(expiry int64, parts []string) string {
	m := hmac.New(sha256.New, s.key)
	for _, p := range append(parts, strconv.FormatInt(expiry, 10)) {
		m.Write([]byte(strconv.Itoa(len(p))))
		m.Write([]byte{0})
		m.Write([]byte(p))
	}
	return hex.EncodeToString(m.Sum(nil))
}
