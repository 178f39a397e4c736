package catalog

// Refusal kinds of the exfiltration guard (core/egress.go). Each is a
// refusal (audit status "refused"), counted under arrowhead.refusals by
// kind like every other.
const (
	// KindEgressGuard refuses an egress call whose arguments carry content
	// the server returned (refuse mode, or a client that cannot elicit).
	KindEgressGuard RefusalKind = "egress_guard"
	// KindEgressConfirm holds such a call while the user is asked to
	// confirm it; the retry carrying the answer has its own audit line.
	KindEgressConfirm RefusalKind = "egress_confirm"
	// KindEgressDeclined refuses such a call the user declined.
	KindEgressDeclined RefusalKind = "egress_declined"
)

// Information-flow label values a result carries in _meta, for a client
// that applies its own policy.
const (
	IntegrityTrusted   = "trusted"
	IntegrityUntrusted = "untrusted"

	ConfidentialityPublic   = "public"
	ConfidentialityInternal = "internal"
	ConfidentialitySecret   = "secret"
)

// FlowLabels are a result's information-flow labels, derived by the guard
// chain from what the component returned: integrity is untrusted when the
// result carries framed outside content; confidentiality is secret when
// it carries a redacted secret, internal when it carries content read from
// this deployment's own files, documents, repository, database, memory or
// model, and public otherwise (web pages, computed answers).
type FlowLabels struct {
	Integrity       string `json:"integrity"`
	Confidentiality string `json:"confidentiality"`
}
