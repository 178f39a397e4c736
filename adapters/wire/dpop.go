package wire

import (
	"errors"
	"fmt"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/auth"
	"github.com/arrowhead-go/arrowhead/ports"
)

// openDPoP builds the DPoP proof checker ARROWHEAD_OAUTH_DPOP asks for (none
// when it is off). Proof ids are kept single-use in the rate-limit store,
// so with ARROWHEAD_REDIS_URL a proof used at one replica is refused at
// every other; an htu is checked against ARROWHEAD_SERVER_PUBLIC_URL, the
// URL clients use, never the Host a proxy forwards.
func (rt *Runtime) openDPoP(rates ports.RateStore, clock ports.Clock) error {
	s := rt.Settings
	if s.OAuthDPoP == "" || s.OAuthDPoP == auth.DPoPOff {
		return nil
	}
	guard, ok := rates.(ports.ReplayGuard)
	if !ok {
		return errors.New("ARROWHEAD_OAUTH_DPOP: the rate-limit store cannot keep proof ids")
	}
	d, err := auth.NewDPoP(auth.DPoPConfig{
		Mode:      s.OAuthDPoP,
		PublicURL: s.CanonicalResource(),
		Replay:    guard,
		Window:    time.Duration(s.OAuthDPoPWindowS) * time.Second,
		Clock:     clock.Now,
	})
	if err != nil {
		return fmt.Errorf("ARROWHEAD_OAUTH_DPOP: %w", err)
	}
	rt.DPoP = d
	return nil
}
