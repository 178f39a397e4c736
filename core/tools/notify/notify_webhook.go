package notify

import (
	"context"
	"encoding/json"
	"maps"
	"net/url"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

type notifyInput struct {
	URL     string         `json:"url" description:"Webhook URL under an operator-allowlisted prefix." maxLength:"$url"`
	Payload map[string]any `json:"payload" description:"JSON object to POST."`
}

type notifyOutput struct {
	content.Framed
	Status    int    `json:"status" description:"HTTP status the webhook answered with." minimum:"100" maximum:"599"`
	Delivered bool   `json:"delivered" description:"True when the status was 2xx."`
	Truncated bool   `json:"truncated" description:"True when the response was cut at ARROWHEAD_NOTIFY_MAX_RESPONSE_BYTES."`
	Signed    bool   `json:"signed" description:"True when the delivery carried Standard Webhooks signature headers."`
	MessageID string `json:"webhook_id,omitempty" description:"The webhook-id header of a signed delivery."`
}

// notifyWebhook defines notify_webhook.
var notifyWebhook = catalog.Define[notifyInput, notifyOutput](catalog.ToolDef{
	Name:        "notify_webhook",
	Scope:       "notify:send",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_NOTIFY_WEBHOOK_PER_MINUTE", Default: 10},
	Description: "POST a JSON payload to a webhook URL on the operator allowlist and return the bounded response status. Example: notify_webhook(url=\"https://hooks.example.com/services/T0\", payload={\"text\": \"done\"})",
	Annotations: catalog.Annotations{Title: "Send webhook", OpenWorld: true},
	Bounds:      catalog.Bounds{"url": security.MaxURLLength},
})

const (
	msgNotAllowlisted = "The URL is not under a destination this server allows (ARROWHEAD_NOTIFY_ALLOWLIST)."
	msgPayloadSecret  = "The payload appears to contain a secret; nothing was sent."
	msgDeliveryFailed = "The webhook could not be reached."
)

func (n *server) notify(ctx context.Context, call catalog.Call, in notifyInput) (*catalog.Reply[notifyOutput], error) {
	dest, ok := destination(in.URL)
	if !ok || !n.Allowlist.Match(in.URL) {
		return nil, catalog.Invalid(msgNotAllowlisted)
	}
	if !n.Authorizer.Authorize(ctx, call.Principal, ports.ActionNotify, ports.Resource{Kind: ports.KindWebhook, ID: dest}).Allowed {
		return nil, catalog.Denied()
	}
	body, err := json.Marshal(in.Payload)
	if err != nil {
		return nil, catalog.Invalid("The payload must be a JSON object.")
	}
	if len(body) > n.config.MaxPayloadBytes {
		return nil, catalog.Invalid("The payload exceeds %d bytes (ARROWHEAD_NOTIFY_MAX_PAYLOAD_BYTES).", n.config.MaxPayloadBytes)
	}
	if len(n.Scanner.ScanText("payload", string(body), 1)) > 0 {
		return nil, catalog.Invalid(msgPayloadSecret)
	}
	headers := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/plain;q=0.9, */*;q=0.1"}
	var out notifyOutput
	if n.Signer != nil {
		sig, err := n.Signer.Sign(body, n.Clock.Now())
		if err != nil {
			return nil, catalog.Failed(msgDeliveryFailed).WithCause(err)
		}
		maps.Copy(headers, sig)
		out.Signed, out.MessageID = true, sig[security.WebhookIDHeader]
	}
	resp, err := n.Egress.Fetch(ctx, ports.FetchRequest{
		Method:       "POST",
		URL:          in.URL,
		Headers:      headers,
		Body:         body,
		MaxBytes:     n.config.MaxResponseBytes,
		TruncateBody: true,
		Timeout:      n.config.Timeout,
		MaxRedirects: 0,
	})
	if err != nil {
		return nil, catalog.EgressRefusal(err, msgDeliveryFailed)
	}
	text, _ := content.SanitizeText(resp.Body) // "" for a UTF-7 answer
	out.Framed = content.Frame(text, content.NewSource("webhook_response", dest, "text", resp.Body))
	out.Status = resp.Status
	out.Delivered = resp.Status >= 200 && resp.Status <= 299
	out.Truncated = resp.Truncated
	return catalog.Answer(out, out.Framed.Text+content.CutNote(resp.Truncated, "ARROWHEAD_NOTIFY_MAX_RESPONSE_BYTES", n.config.MaxResponseBytes)), nil
}

// destination is the authorization resource of a webhook URL: its
// lower-case host, a non-default port, and its path, without the query (a
// token there is no part of the destination). Grants name destinations by
// prefix on a "/" boundary, e.g. "hooks.example.com/services".
func destination(raw string) (string, bool) {
	u, d := security.ParseURL(raw)
	if !d.Allowed {
		return "", false
	}
	t, d := security.CheckURL(u, nil)
	if !d.Allowed {
		return "", false
	}
	host := t.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if (t.URL.Scheme == "https" && t.Port != security.PortHTTPS) || (t.URL.Scheme == "http" && t.Port != security.PortHTTP) {
		host = security.JoinHostPort(t.Host, t.Port)
	}
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if q, err := url.PathUnescape(p); err == nil {
		p = q
	}
	return host + p, true
}
