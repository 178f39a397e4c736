package wire

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/core/settings"
)

// BenchmarkLoadSigner is what loading the data directory's attestation key
// adds to every start (after the first, which generates it).
func BenchmarkLoadSigner(b *testing.B) {
	s := settings.Defaults()
	s.DataDir = b.TempDir()
	if _, err := signer(s); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := signer(s); err != nil {
			b.Fatal(err)
		}
	}
}
