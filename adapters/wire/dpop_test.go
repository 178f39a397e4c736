package wire

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/inproc"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// rateOnly is a rate store that keeps no single-use keys.
type rateOnly struct{ ports.RateStore }

// TestOpenDPoP: off builds nothing; on, the rate store must be able to keep
// proof ids, or the build fails rather than run DPoP without replay checks.
func TestOpenDPoP(t *testing.T) {
	clock := ports.SystemClock{}
	s := &settings.Settings{ServerPublicURL: "https://mcp.example", OAuthDPoPWindowS: 60}
	for _, mode := range []string{"", "off"} {
		s.OAuthDPoP = mode
		rt := &Runtime{Settings: s}
		if err := rt.openDPoP(inproc.NewRateStore(clock), clock); err != nil || rt.DPoP != nil {
			t.Fatalf("mode %q: %v, %v; want no checker", mode, rt.DPoP, err)
		}
	}
	for _, mode := range []string{"allowed", "required"} {
		s.OAuthDPoP = mode
		rt := &Runtime{Settings: s}
		if err := rt.openDPoP(inproc.NewRateStore(clock), clock); err != nil || rt.DPoP == nil || rt.DPoP.Required() != (mode == "required") {
			t.Fatalf("mode %q: %v, %v", mode, rt.DPoP, err)
		}
		rt = &Runtime{Settings: s}
		if err := rt.openDPoP(rateOnly{inproc.NewRateStore(clock)}, clock); err == nil || rt.DPoP != nil {
			t.Fatalf("mode %q without a replay store: %v, %v; want an error", mode, rt.DPoP, err)
		}
	}
}
