package wire

import (
	"github.com/arrowhead-go/arrowhead/adapters/signing"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// signer loads the attestation key (ARROWHEAD_ATTESTATION_KEY, else the
// one generated once into the data directory). Each assembly calls it
// once and hands the key to what signs: the audit chain's checkpoints.
func signer(s *settings.Settings) (*signing.Key, error) {
	return signing.Load(s.AttestationKey, s.DataDir)
}
