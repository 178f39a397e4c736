package ports

import (
	"context"
	"errors"
	"net/netip"
	"time"
)

// Resolver looks up a host's addresses. *net.Resolver satisfies it; tests
// substitute a fake that answers with loopback addresses for chosen names.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// FetchRequest is one outbound HTTP request through the SSRF-guarded egress
// path. It never carries inbound credentials: the only headers sent are the
// ones named here.
type FetchRequest struct {
	Method  string
	URL     string
	Headers map[string]string
	Body    []byte
	// MaxBytes caps the response body after decompression.
	MaxBytes int64
	// TruncateBody, when true, keeps the first MaxBytes of a longer body and
	// reports Truncated instead of failing: for a delivery whose answer is
	// only informative, where failing would hide that the request was made.
	TruncateBody bool
	// Timeout bounds the whole exchange, redirects included.
	Timeout time.Duration
	// MaxRedirects is how many redirects to follow, each re-guarded. Zero
	// refuses any redirect.
	MaxRedirects int
	// Internal, when true, lets a configuration-addressed client reach a
	// host:port pair named in the egress adapter's internal list. Tools that
	// take a URL from a caller never set it.
	Internal bool
}

// FetchResponse is the guarded answer.
type FetchResponse struct {
	Status      int
	ContentType string
	Body        []byte
	// FinalURL is the URL of the last hop (after redirects).
	FinalURL string
	// Truncated is true when TruncateBody cut the body at MaxBytes.
	Truncated bool
}

// Egress performs guarded outbound HTTP. Implementations resolve once, check
// every address against the SSRF policy, pin the approved address for the
// dial, and re-check the connected address.
type Egress interface {
	Fetch(ctx context.Context, req FetchRequest) (FetchResponse, error)
}

// EgressReason classifies why the egress path refused or failed.
type EgressReason string

// Egress refusal reasons. Their text is safe to show a caller: none of them
// carries the URL, host or address.
const (
	EgressBadURL          EgressReason = "the URL is malformed"
	EgressScheme          EgressReason = "only http and https URLs are allowed"
	EgressCredentials     EgressReason = "URLs carrying credentials are not allowed"
	EgressHostNotAllowed  EgressReason = "the host is not on the egress allowlist"
	EgressPortNotAllowed  EgressReason = "the port is not allowed"
	EgressBlockedAddress  EgressReason = "the destination resolves to a non-public address"
	EgressResolve         EgressReason = "the host could not be resolved"
	EgressConnect         EgressReason = "the destination could not be reached"
	EgressTimeout         EgressReason = "the request timed out"
	EgressTooManyRedirect EgressReason = "too many redirects"
	EgressRedirectRefused EgressReason = "redirects are not followed for this request"
	EgressTooLarge        EgressReason = "the response exceeds the size limit"
	EgressProtocol        EgressReason = "the response could not be read"
)

// EgressError is returned by Egress for every refusal and failure.
type EgressError struct {
	Reason EgressReason
	// Err is the underlying cause for operators; never shown to a caller.
	Err error
}

func (e *EgressError) Error() string { return string(e.Reason) }

// Unwrap returns the underlying cause.
func (e *EgressError) Unwrap() error { return e.Err }

// EgressReasonOf returns the reason carried by err, or "" when err is not an
// EgressError.
func EgressReasonOf(err error) EgressReason {
	var ee *EgressError
	if errors.As(err, &ee) {
		return ee.Reason
	}
	return ""
}
