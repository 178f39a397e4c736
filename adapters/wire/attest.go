package wire

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/signing"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// signer loads the attestation key named by ARROWHEAD_ATTESTATION_KEY, or
// the one generated into ARROWHEAD_DATA_DIR. Build calls it once and keeps
// the key in Runtime.signer: the surface manifest and the audit log's
// checkpoints are signed by the same key, and replicas that must agree
// share the setting.
func signer(s *settings.Settings) (*signing.Key, error) {
	key, err := signing.Load(s.AttestationKey, s.DataDir)
	if err != nil {
		return nil, fmt.Errorf("ARROWHEAD_ATTESTATION_KEY: %w", err)
	}
	return key, nil
}

// declaredSigner is a throwaway key for the declared catalog (list-tools,
// the reference docs, the golden surface): it lists the attestation
// resources a served App has, without reading or creating the data
// directory's key. It never signs anything anyone sees.
func declaredSigner() *signing.Key {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(fmt.Sprintf("declared catalog: %v", err)) // crypto/rand does not fail
	}
	key, err := signing.New(priv)
	if err != nil {
		panic(fmt.Sprintf("declared catalog: %v", err))
	}
	return key
}
