package wire

import (
	"errors"
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/httpx"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/notify"
	"github.com/arrowhead-go/arrowhead/ports"
)

// openNotify builds the notify family's ports when the family is served
// (the profile selects it and ARROWHEAD_NOTIFY_ALLOWLIST names a
// destination): the parsed allowlist, the signer, and an egress path
// of its own that reaches only the allowlist's hosts and ports. That path
// is the same guarded adapter as every other egress, so an allowlisted name
// that resolves to a private or loopback address still receives nothing.
// It deliberately does not inherit ARROWHEAD_EGRESS_ALLOWED_HOSTS, which
// confines the fetch tools: the notify allowlist is the operator's
// decision for this channel.
func openNotify(s *settings.Settings, resolver ports.Resolver, clock ports.Clock, authorizer ports.Authorizer, scanner *security.Scanner) (notify.Ports, error) {
	if !notify.Family.Serves(s) {
		return notify.Ports{}, nil
	}
	allow, err := security.ParseURLAllowlist(s.NotifyAllowlist)
	if err != nil {
		return notify.Ports{}, fmt.Errorf("ARROWHEAD_NOTIFY_ALLOWLIST: %w", err)
	}
	egress, err := httpx.New(httpx.Config{
		AllowedHosts: allow.Hosts(),
		AllowedPorts: allow.Ports(),
		UserAgent:    ServerName + "/" + Version,
	}, resolver)
	if err != nil {
		return notify.Ports{}, fmt.Errorf("ARROWHEAD_NOTIFY_ALLOWLIST: %w", err)
	}
	p := notify.Ports{Egress: egress, Allowlist: &allow, Authorizer: authorizer,
		Scanner: scanner, Clock: clock}
	if s.NotifySigningSecret != "" {
		if p.Signer, err = security.NewWebhookSigner(s.NotifySigningSecret); err != nil {
			return notify.Ports{}, errors.New("ARROWHEAD_NOTIFY_SIGNING_SECRET: " + err.Error())
		}
	}
	return p, nil
}
