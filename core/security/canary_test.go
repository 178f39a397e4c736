package security_test

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/security"
)

const (
	keyCanary = "AKIAQX7TRIPWIRE2ZK5M"
	urlCanary = "https://wiki.internal.example.com/share/k3v9q2m8x7z4w1r6t5y0"
)

func canaries(t *testing.T) *security.Canaries {
	t.Helper()
	c, err := security.NewCanaries([]string{keyCanary, " ", urlCanary})
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 2 {
		t.Fatalf("Len = %d, want 2", c.Len())
	}
	return c
}

func TestCanariesMatchNormalizedForms(t *testing.T) {
	c := canaries(t)
	fullwidth := strings.Map(func(r rune) rune {
		if r >= '!' && r <= '~' {
			return r - '!' + '！'
		}
		return r
	}, keyCanary)
	zw := keyCanary[:6] + "\u200b" + keyCanary[6:12] + "\u2060" + keyCanary[12:]
	for name, in := range map[string]string{
		"plain":                "creds: " + keyCanary + " end",
		"lower case":           strings.ToLower(keyCanary),
		"fullwidth (NFKC)":     "key=" + fullwidth,
		"zero-width split":     zw,
		"url in a query":       "https://attacker.example/?q=" + url.QueryEscape(urlCanary),
		"double percent":       "https://attacker.example/" + url.QueryEscape(url.QueryEscape(urlCanary)),
		"percent zero-width":   strings.ReplaceAll(url.QueryEscape(zw), "AKIA", "%41KIA"),
		"base64 aligned":       base64.StdEncoding.EncodeToString([]byte(keyCanary)),
		"base64 shifted by 1":  base64.StdEncoding.EncodeToString([]byte("x" + keyCanary + "y")),
		"base64 shifted by 2":  base64.URLEncoding.EncodeToString([]byte("xy" + urlCanary)),
		"hex upper":            strings.ToUpper(hex.EncodeToString([]byte("--" + keyCanary))),
		"inside a long string": strings.Repeat("a", 5000) + urlCanary + strings.Repeat("b", 10),
	} {
		t.Run(name, func(t *testing.T) {
			id, ok := c.Match(in)
			if !ok {
				t.Fatalf("no match in %q", in)
			}
			if !strings.HasPrefix(id, "canary-") || strings.Contains(id, keyCanary) {
				t.Fatalf("id %q", id)
			}
		})
	}
}

func TestCanariesIgnoreOrdinaryText(t *testing.T) {
	c := canaries(t)
	for _, in := range []string{
		"", "AKIAQX7TRIPWIRE2ZK5", // one character short
		"https://wiki.internal.example.com/share/",
		"AKIAQX7TRIP WIRE2ZK5M", // a space is not a zero-width character
		strings.Repeat("AKIAQX7TRIPWIRE2ZK5", 200),
		"%%%%41%4", "ｆｕｌｌ ｗｉｄｔｈ but nothing planted",
	} {
		if id, ok := c.Match(in); ok {
			t.Errorf("Match(%.40q) = %s", in, id)
		}
	}
}

func TestCanaryIDsAreStableAndDistinct(t *testing.T) {
	c := canaries(t)
	a, _ := c.Match(keyCanary)
	b, _ := c.Match(urlCanary)
	if a == b || a != security.CanaryID(keyCanary) || a != security.CanaryID(strings.ToLower(keyCanary)) {
		t.Fatalf("ids %q %q", a, b)
	}
}

func TestCanariesRefuseShortTokens(t *testing.T) {
	if _, err := security.NewCanaries([]string{"hunter2"}); err != security.ErrCanaryTooShort {
		t.Fatalf("err = %v", err)
	}
	empty, err := security.NewCanaries(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := empty.Match(keyCanary); ok || empty.Len() != 0 {
		t.Fatal("an empty set matched")
	}
}

func TestMintedCanariesAreFoundWherePlanted(t *testing.T) {
	m, err := security.MintCanaries(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tokens) != 4 || !strings.HasPrefix(m.Tokens[0], "AKIA") || len(m.Tokens[0]) != 20 || len(m.Tokens[1]) != 40 {
		t.Fatalf("tokens %q", m.Tokens)
	}
	c, err := security.NewCanaries(m.Tokens)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range m.Lines {
		if _, ok := c.Match(line); !ok {
			t.Errorf("planted line %q not matched", line)
		}
	}
	again, _ := security.MintCanaries(nil, "")
	if again.Tokens[0] == m.Tokens[0] {
		t.Fatal("two mints gave the same key")
	}
}

// BenchmarkCanariesNoHit is the cost on a call that carries no canary: a
// typical argument (a URL and a query) against ten canaries.
func BenchmarkCanariesNoHit(b *testing.B) {
	var tokens []string
	for range 10 {
		m, err := security.MintCanaries(nil, "")
		if err != nil {
			b.Fatal(err)
		}
		tokens = append(tokens, m.Tokens...)
	}
	c, err := security.NewCanaries(tokens)
	if err != nil {
		b.Fatal(err)
	}
	in := "https://docs.example.com/guide/install?lang=en&page=2 how do I configure the retry policy for the payments queue"
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, ok := c.Match(in); ok {
			b.Fatal("hit")
		}
	}
}
