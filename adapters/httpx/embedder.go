package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Defaults and bounds of the HTTP embedder. The defaults are the seed's
// ARROWHEAD_EMBEDDING_* defaults.
const (
	DefaultEmbeddingBatchSize              = 64
	DefaultEmbeddingMaxTexts               = 10000
	DefaultEmbeddingMaxResponseBytes int64 = 8_000_000
	DefaultEmbeddingTimeout                = 30 * time.Second
	// MaxEmbeddingDimensions is the widest vector accepted (the bound of
	// ARROWHEAD_EMBEDDING_DIMENSIONS).
	MaxEmbeddingDimensions = 16000
	// DefaultEmbeddingMaxRequestBytes caps one request body (one batch).
	// Chunks and queries are far smaller; a batch over it is refused, not
	// sent.
	DefaultEmbeddingMaxRequestBytes = 16 << 20
)

// EmbedderConfig configures the OpenAI-compatible embedding client. All of
// it comes from operator configuration (ARROWHEAD_EMBEDDING_*), never from
// a caller. Zero values of BatchSize, MaxTexts, MaxResponseBytes,
// MaxRequestBytes and Timeout take the Default* constants.
type EmbedderConfig struct {
	// Endpoint is the full embeddings URL, e.g. https://api.example/v1/embeddings.
	Endpoint string
	// Model is sent as "model"; omitted when empty (some local servers
	// serve one model and need none).
	Model string
	// APIKey is sent as "Authorization: Bearer <key>" to Endpoint only;
	// omitted when empty.
	APIKey string
	// Dimensions is the width every returned vector must have.
	Dimensions int
	// RequestDimensions also sends "dimensions": Dimensions, asking the
	// endpoint to shorten its vectors (OpenAI text-embedding-3 models and
	// compatible servers). Off by default: older models refuse the field.
	RequestDimensions bool
	// BatchSize is how many texts one request carries.
	BatchSize int
	// MaxTexts is the most texts one Embed call may carry.
	MaxTexts int
	// MaxResponseBytes caps each response body (after decompression).
	MaxResponseBytes int64
	// MaxRequestBytes caps each request body. No variable sets it; the
	// default is generous.
	MaxRequestBytes int
	// Timeout bounds each request (one batch).
	Timeout time.Duration
	// Internal marks the endpoint as a trusted internal host:port pair (a
	// local model server). The wiring sets it to
	// InternalEndpoint(Endpoint, settings.LLMInternalHosts), the same
	// ARROWHEAD_LLM_INTERNAL_HOSTS list it gives the egress adapter as
	// Config.InternalHosts. It is a request, not a grant: the egress adapter
	// exempts the endpoint from the host allowlist, port allowlist and
	// non-public-address refusals only if its exact pair is on the
	// adapter's own list, and otherwise applies every rule as usual.
	Internal bool
}

// String describes the configuration for logs with the key and the
// endpoint left out (an endpoint URL can carry a key in its query). Both
// %v and %+v use it; GoString covers %#v.
func (c EmbedderConfig) String() string {
	set := func(v string) string {
		if v == "" {
			return "[none]"
		}
		return "[redacted]"
	}
	return "httpx.EmbedderConfig{Endpoint:" + set(c.Endpoint) + " Model:" + strconv.Quote(c.Model) +
		" APIKey:" + set(c.APIKey) + " Dimensions:" + strconv.Itoa(c.Dimensions) +
		" BatchSize:" + strconv.Itoa(c.BatchSize) + " MaxTexts:" + strconv.Itoa(c.MaxTexts) +
		" MaxResponseBytes:" + strconv.FormatInt(c.MaxResponseBytes, 10) +
		" MaxRequestBytes:" + strconv.Itoa(c.MaxRequestBytes) + " Timeout:" + c.Timeout.String() +
		" Internal:" + strconv.FormatBool(c.Internal) + "}"
}

// GoString is String, so %#v cannot print the key either.
func (c EmbedderConfig) GoString() string { return c.String() }

// EmbedErrorKind classifies an embedding failure. Its text is fixed.
type EmbedErrorKind string

// Embedding failure kinds.
const (
	EmbedConfig          EmbedErrorKind = "the embedding provider is misconfigured"
	EmbedTooManyTexts    EmbedErrorKind = "too many texts to embed in one call"
	EmbedRequestTooLarge EmbedErrorKind = "the embedding request exceeds the size limit"
	EmbedEgress          EmbedErrorKind = "the embedding endpoint could not be used"
	EmbedStatus          EmbedErrorKind = "the embedding endpoint returned an error status"
	EmbedMalformed       EmbedErrorKind = "the embedding response is malformed"
	EmbedWidth           EmbedErrorKind = "the embedding response has vectors of the wrong width"
	EmbedNonFinite       EmbedErrorKind = "the embedding response has a non-finite number"
)

// EmbedError is every error the HTTP embedder returns. It is built only
// from fixed text, a status code and an egress reason: never from the API
// key, the endpoint URL, a response body or a text, so it is safe to log
// and to show a caller. The transport's own error (which can name the
// endpoint) is deliberately not kept.
type EmbedError struct {
	Kind EmbedErrorKind
	// Status is the HTTP status of an EmbedStatus error.
	Status int
	// Reason is the egress refusal behind an EmbedEgress error.
	Reason ports.EgressReason
}

func (e *EmbedError) Error() string {
	msg := "embedding: " + string(e.Kind)
	if e.Reason != "" {
		msg += ": " + string(e.Reason)
	}
	if e.Status != 0 {
		msg += " (" + strconv.Itoa(e.Status) + ")"
	}
	return msg
}

// Unwrap exposes the egress reason of an EmbedEgress error as a
// *ports.EgressError carrying only that reason, so ports.EgressReasonOf
// works on it.
func (e *EmbedError) Unwrap() error {
	if e.Reason == "" {
		return nil
	}
	return &ports.EgressError{Reason: e.Reason}
}

func embedErr(kind EmbedErrorKind) error { return &EmbedError{Kind: kind} }

// HTTPEmbedder is the OpenAI-compatible ports.Embedder. Every request goes
// through the SSRF-guarded ports.Egress to the configured endpoint only,
// with redirects refused (a redirect could carry the key elsewhere), each
// batch bounded in time and response size, and the answer parsed strictly.
// It keeps no state between calls and is safe for concurrent use.
type HTTPEmbedder struct {
	cfg    EmbedderConfig
	egress ports.Egress
	header map[string]string
}

var _ ports.Embedder = (*HTTPEmbedder)(nil)

// NewHTTPEmbedder validates cfg and builds the embedder. The endpoint must
// be an absolute http or https URL without credentials; whether it may be
// reached is the egress adapter's decision at each request. Errors name
// the problem, never the endpoint or the key.
func NewHTTPEmbedder(cfg EmbedderConfig, egress ports.Egress) (*HTTPEmbedder, error) {
	if egress == nil {
		return nil, errors.New("httpx: the embedder needs an egress")
	}
	if cfg.Endpoint == "" {
		return nil, errors.New("httpx: the embedding endpoint is required")
	}
	u, d := security.ParseURL(cfg.Endpoint)
	if d.Allowed {
		_, d = security.CheckURL(u, ToASCII)
	}
	if !d.Allowed {
		return nil, errors.New("httpx: the embedding endpoint is not usable: " + string(d.Reason))
	}
	if cfg.Dimensions < 1 || cfg.Dimensions > MaxEmbeddingDimensions {
		return nil, errors.New("httpx: embedding dimensions must be between 1 and " + strconv.Itoa(MaxEmbeddingDimensions))
	}
	if cfg.BatchSize < 0 || cfg.MaxTexts < 0 || cfg.MaxResponseBytes < 0 || cfg.MaxRequestBytes < 0 || cfg.Timeout < 0 {
		return nil, errors.New("httpx: embedding limits must not be negative")
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultEmbeddingBatchSize
	}
	if cfg.MaxTexts == 0 {
		cfg.MaxTexts = DefaultEmbeddingMaxTexts
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = DefaultEmbeddingMaxResponseBytes
	}
	if cfg.MaxRequestBytes == 0 {
		cfg.MaxRequestBytes = DefaultEmbeddingMaxRequestBytes
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultEmbeddingTimeout
	}
	header := map[string]string{
		"Content-Type": "application/json",
		"Accept":       "application/json",
	}
	if cfg.APIKey != "" {
		auth := "Bearer " + cfg.APIKey
		if !httpguts.ValidHeaderFieldValue(auth) {
			return nil, errors.New("httpx: the embedding API key is not a valid header value")
		}
		header["Authorization"] = auth
	}
	return &HTTPEmbedder{cfg: cfg, egress: egress, header: header}, nil
}

// InternalEndpoint reports whether endpoint's exact host:port pair (after
// the egress adapter's own normalisation: lower-case ASCII host, explicit
// or default port) is one of internalHosts, the
// ARROWHEAD_LLM_INTERNAL_HOSTS entries. The wiring uses it to set
// EmbedderConfig.Internal. Malformed input is simply not internal.
func InternalEndpoint(endpoint string, internalHosts []string) bool {
	u, d := security.ParseURL(endpoint)
	if !d.Allowed {
		return false
	}
	t, d := security.CheckURL(u, ToASCII)
	if !d.Allowed {
		return false
	}
	for _, hp := range internalHosts {
		if key, err := internalKey(hp); err == nil && key == t.HostPort() {
			return true
		}
	}
	return false
}

// String describes the embedder without its key or endpoint.
func (h *HTTPEmbedder) String() string { return "httpx.HTTPEmbedder{" + h.cfg.String() + "}" }

// GoString is String, so %#v cannot print the key either.
func (h *HTTPEmbedder) GoString() string { return h.String() }

// Dimensions is the width of every vector returned.
func (h *HTTPEmbedder) Dimensions() int { return h.cfg.Dimensions }

// Semantic is true: the vectors come from a model.
func (h *HTTPEmbedder) Semantic() bool { return true }

// Embed returns one vector per text, in order. Texts are sent in batches
// of BatchSize, one request at a time; the first failure ends the call.
// Errors are *EmbedError, or ctx's own error when ctx ends between batches.
func (h *HTTPEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) > h.cfg.MaxTexts {
		return nil, embedErr(EmbedTooManyTexts)
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += h.cfg.BatchSize {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch := texts[start:min(start+h.cfg.BatchSize, len(texts))]
		vecs, err := h.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedRequest is the OpenAI-compatible request body.
type embedRequest struct {
	Model      string   `json:"model,omitempty"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

// embedResponse is the part of the answer that is read; other fields
// ("object", "model", "usage") are ignored.
type embedResponse struct {
	Data []embedDatum `json:"data"`
}

type embedDatum struct {
	Index     *int        `json:"index"`
	Embedding []component `json:"embedding"`
}

// component is one vector component, decoded strictly: a JSON number (not
// a string, null, boolean or anything else) that stays finite once
// narrowed to float32. A number beyond float64's range is non-finite too.
type component float32

var (
	errNotNumber = errors.New("vector component is not a number")
	errNonFinite = errors.New("vector component is not finite")
)

func (c *component) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || !(b[0] == '-' || '0' <= b[0] && b[0] <= '9') {
		return errNotNumber
	}
	f, err := strconv.ParseFloat(string(b), 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return errNonFinite
	case err != nil:
		return errNotNumber
	}
	f32 := float32(f)
	if math.IsInf(float64(f32), 0) || math.IsNaN(float64(f32)) {
		return errNonFinite
	}
	*c = component(f32)
	return nil
}

func (h *HTTPEmbedder) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	// Encoding only ever lengthens a text, so a batch whose raw texts
	// already exceed the cap is refused before it is encoded.
	size := 0
	for _, t := range batch {
		size += len(t)
	}
	if size > h.cfg.MaxRequestBytes {
		return nil, embedErr(EmbedRequestTooLarge)
	}
	req := embedRequest{Model: h.cfg.Model, Input: batch}
	if h.cfg.RequestDimensions {
		req.Dimensions = h.cfg.Dimensions
	}
	body, err := json.Marshal(req)
	if err != nil {
		// Unreachable: a struct of strings and ints always marshals
		// (invalid UTF-8 is replaced, not refused).
		return nil, embedErr(EmbedMalformed)
	}
	if len(body) > h.cfg.MaxRequestBytes {
		return nil, embedErr(EmbedRequestTooLarge)
	}
	resp, err := h.egress.Fetch(ctx, ports.FetchRequest{
		Method:       http.MethodPost,
		URL:          h.cfg.Endpoint,
		Headers:      h.header,
		Body:         body,
		MaxBytes:     h.cfg.MaxResponseBytes,
		Timeout:      h.cfg.Timeout,
		MaxRedirects: 0,
		Internal:     h.cfg.Internal,
	})
	if err != nil {
		reason := ports.EgressReasonOf(err)
		if reason == "" {
			reason = ports.EgressProtocol
		}
		return nil, &EmbedError{Kind: EmbedEgress, Reason: reason}
	}
	if resp.Status < 200 || resp.Status > 299 {
		return nil, &EmbedError{Kind: EmbedStatus, Status: resp.Status}
	}
	return h.parse(resp.Body, len(batch))
}

// parse reads the answer strictly: a single JSON object whose "data" has
// exactly n items, each index in 0..n-1 exactly once, each vector
// Dimensions numbers, each number finite as a float32. Other fields are
// ignored. The body never reaches an error.
func (h *HTTPEmbedder) parse(body []byte, n int) ([][]float32, error) {
	var r embedResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&r); err != nil {
		if errors.Is(err, errNonFinite) {
			return nil, embedErr(EmbedNonFinite)
		}
		return nil, embedErr(EmbedMalformed)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, embedErr(EmbedMalformed) // data after the object
	}
	if len(r.Data) != n {
		return nil, embedErr(EmbedMalformed)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index == nil || *d.Index < 0 || *d.Index >= n || out[*d.Index] != nil {
			return nil, embedErr(EmbedMalformed)
		}
		if len(d.Embedding) != h.cfg.Dimensions {
			return nil, embedErr(EmbedWidth)
		}
		v := make([]float32, len(d.Embedding))
		for i, c := range d.Embedding {
			v[i] = float32(c)
		}
		out[*d.Index] = v
	}
	return out, nil
}
