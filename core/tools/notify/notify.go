// Package notify is the outbound-notification family: notify_webhook posts
// a caller's JSON payload to a destination the operator named in
// ARROWHEAD_NOTIFY_ALLOWLIST. It is a deliberate egress channel, so it is
// gated twice (the family registers only with a non-empty allowlist, and the
// notify action must be granted per destination), every delivery goes
// through the SSRF-guarded egress path with redirects refused, a payload in
// which the secret scanner finds a secret is never sent, and, with
// ARROWHEAD_NOTIFY_SIGNING_SECRET set, each delivery is signed the Standard
// Webhooks way so the receiver can verify it.
package notify

import (
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Ports are what the notify family uses.
type Ports struct {
	// Egress delivers: the guarded egress path, configured to reach only
	// the allowlist's hosts and ports.
	Egress ports.Egress
	// Allowlist is ARROWHEAD_NOTIFY_ALLOWLIST, parsed at start-up.
	Allowlist *security.URLAllowlist
	// Authorizer grants the notify action per destination.
	Authorizer ports.Authorizer
	// Scanner refuses payloads that carry a secret.
	Scanner *security.Scanner
	// Signer signs deliveries; nil sends them unsigned
	// (ARROWHEAD_NOTIFY_SIGNING_SECRET unset).
	Signer *security.WebhookSigner `port:"optional"`
	// Clock stamps signatures.
	Clock ports.Clock
}

// Family is the notify family. It is served only when the allowlist names
// at least one destination, so the default catalog never lists a tool that
// cannot succeed.
var Family = core.LegacyFamily[Ports]{
	ID:      catalog.FamilyNotify,
	Gate:    func(s *settings.Settings) bool { return len(s.NotifyAllowlist) > 0 },
	GateDoc: "`ARROWHEAD_NOTIFY_ALLOWLIST` is not empty",
	Declare: func(s *settings.Settings) core.Components {
		return core.Components{Tools: []catalog.ToolSpec{notifyWebhook(s).Spec()}}
	},
	Bind: func(s *settings.Settings, p Ports) core.Components {
		n := notifier{settings: s, egress: p.Egress, allowlist: p.Allowlist, authorizer: p.Authorizer,
			scanner: p.Scanner, signer: p.Signer, clock: p.Clock}
		return core.Components{Tools: []catalog.ToolSpec{notifyWebhook(s).Bind(n.notify)}}
	},
}
