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
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/security"
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

// Config is what the notify family reads from the settings.
type Config struct {
	// Allowlist is ARROWHEAD_NOTIFY_ALLOWLIST: the family is served when it
	// names a destination. The parsed list is a port.
	Allowlist []string `setting:"ARROWHEAD_NOTIFY_ALLOWLIST"`
	// MaxPayloadBytes caps the JSON payload one delivery sends.
	MaxPayloadBytes int `setting:"ARROWHEAD_NOTIFY_MAX_PAYLOAD_BYTES"`
	// MaxResponseBytes caps what is read of the webhook's answer.
	MaxResponseBytes int64 `setting:"ARROWHEAD_NOTIFY_MAX_RESPONSE_BYTES"`
	// Timeout bounds one delivery.
	Timeout time.Duration `setting:"ARROWHEAD_NOTIFY_TIMEOUT_SECONDS"`
}

// Family is the notify family. It is served only when the allowlist names
// at least one destination, so the default catalog never lists a tool that
// cannot succeed.
var Family = core.Family[Config, Ports, *server]{
	ID:      catalog.FamilyNotify,
	Gate:    func(c Config) bool { return len(c.Allowlist) > 0 },
	GateDoc: "`ARROWHEAD_NOTIFY_ALLOWLIST` is not empty",
	Serve:   func(c Config, p Ports) *server { return &server{config: c, Ports: p} },
	Tools: []core.FamilyTool[*server]{
		core.Tool(notifyWebhook, (*server).notify),
	},
}

// server is notify_webhook's: the allowlist decides the destination, the
// authorizer the caller's right to it, the scanner the payload, the egress
// path the delivery.
type server struct {
	config Config
	Ports
}
