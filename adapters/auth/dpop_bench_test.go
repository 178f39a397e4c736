package auth

import (
	"crypto"
	"crypto/elliptic"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
)

// BenchmarkDPoPCheck measures one request's proof verification (parse,
// key checks, signature, claims, ath, thumbprint and the in-process replay
// store) per proof algorithm, and reports its median as p50-µs. Proofs are
// signed before the timer starts, each with its own jti; run it with a
// fixed count (-benchtime=2000x) so signing stays bounded.
func BenchmarkDPoPCheck(b *testing.B) {
	for _, tc := range []struct {
		name string
		key  func() crypto.Signer
		alg  jwa.SignatureAlgorithm
	}{
		{"ES256", func() crypto.Signer { return mustEC(elliptic.P256()) }, jwa.ES256},
		{"EdDSA", func() crypto.Signer { return edKey() }, jwa.EdDSA},
		{"RS256", func() crypto.Signer { return rsaKey2() }, jwa.RS256},
		{"PS256", func() crypto.Signer { return rsaKey2() }, jwa.PS256},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := newDPoPEnv(b, DPoPAllowed)
			p := newProver(b, tc.key(), tc.alg)
			tok := boundToken(b, p.jkt)
			proofs := make([]string, b.N)
			for i := range proofs {
				proofs[i] = p.proof(b, proofClaimsFor(tok, map[string]any{"jti": "bench-" + strconv.Itoa(i)}), nil)
			}
			req := httptest.NewRequest(http.MethodPost, "http://10.0.0.7:8000/mcp", strings.NewReader("{}"))
			took := make([]time.Duration, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if err := e.d.Check(req.Context(), req, proofs[i:i+1], tok, p.jkt); err != nil {
					b.Fatal(err)
				}
				took[i] = time.Since(start)
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds())/1e3, "p99-µs")
		})
	}
}
