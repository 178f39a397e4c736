package catalog

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
