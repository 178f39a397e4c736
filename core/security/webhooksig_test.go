package security

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks reference test vector (the specification's own
// libraries test against it).
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTS     = "1614265330"
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestWebhookSignatureMatchesReferenceVector(t *testing.T) {
	s, err := NewWebhookSigner(vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.signature(vectorID, vectorTS, []byte(vectorBody)); got != vectorSig {
		t.Fatalf("signature = %s, want %s", got, vectorSig)
	}
}

func TestWebhookSignHeaders(t *testing.T) {
	s, err := NewWebhookSigner(vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	h1, err := s.Sign([]byte("{}"), now)
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := s.Sign([]byte("{}"), now)
	if h1[WebhookIDHeader] == h2[WebhookIDHeader] || !strings.HasPrefix(h1[WebhookIDHeader], "msg_") {
		t.Fatalf("ids must be fresh and prefixed: %q %q", h1[WebhookIDHeader], h2[WebhookIDHeader])
	}
	if h1[WebhookTimestampHeader] != strconv.FormatInt(now.Unix(), 10) {
		t.Fatalf("timestamp = %q", h1[WebhookTimestampHeader])
	}
	want := "v1," + s.signature(h1[WebhookIDHeader], h1[WebhookTimestampHeader], []byte("{}"))
	if h1[WebhookSignatureHeader] != want {
		t.Fatalf("signature header = %q, want %q", h1[WebhookSignatureHeader], want)
	}
	if strings.Contains(strings.Join([]string{h1[WebhookIDHeader], h1[WebhookSignatureHeader]}, " "), "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") {
		t.Fatal("the secret leaked into a header")
	}
}

func TestNewWebhookSignerRefusesBadSecrets(t *testing.T) {
	short := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, MinWebhookKeyBytes-1))
	long := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, MaxWebhookKeyBytes+1))
	for _, s := range []string{"", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_", "whsec_!!!notbase64", short, long} {
		if _, err := NewWebhookSigner(s); err == nil {
			t.Errorf("secret %q was accepted", s)
		} else if len(s) > len("whsec_") && strings.Contains(err.Error(), s) {
			t.Errorf("error repeats the secret")
		}
	}
}
