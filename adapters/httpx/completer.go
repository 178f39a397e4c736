package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Completion providers (ARROWHEAD_LLM_PROVIDER values served over HTTP).
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
)

// Defaults of the HTTP completer.
const (
	// DefaultAnthropicEndpoint is the Messages API, used when
	// ARROWHEAD_LLM_ENDPOINT is empty with the anthropic provider.
	DefaultAnthropicEndpoint = "https://api.anthropic.com/v1/messages"
	// AnthropicVersion is the Messages API version header sent.
	AnthropicVersion = "2023-06-01"
	// DefaultCompletionMaxResponseBytes caps a completion response body.
	DefaultCompletionMaxResponseBytes int64 = 1 << 20
	// DefaultCompletionTimeout is ARROWHEAD_LLM_TIMEOUT_SECONDS's default.
	DefaultCompletionTimeout = 60 * time.Second
)

// CompleterConfig configures the HTTP completer from operator
// configuration (ARROWHEAD_LLM_*), never from a caller.
type CompleterConfig struct {
	// Provider is ProviderAnthropic or ProviderOpenAI.
	Provider string
	// Endpoint is the full Messages or chat-completions URL.
	Endpoint string
	// Model is sent as "model" (omitted when empty for openai-compatible
	// local servers that serve one model).
	Model string
	// APIKey is sent as x-api-key (anthropic) or a bearer token (openai);
	// omitted when empty.
	APIKey string
	// MaxResponseBytes and Timeout bound each call; zero takes the
	// defaults.
	MaxResponseBytes int64
	Timeout          time.Duration
	// Internal marks the endpoint as an ARROWHEAD_LLM_INTERNAL_HOSTS pair
	// (see EmbedderConfig.Internal: a request, not a grant).
	Internal bool
}

// CompleteErrorKind classifies a completion failure. Its text is fixed.
type CompleteErrorKind string

// Completion failure kinds.
const (
	CompleteEgress    CompleteErrorKind = "the model endpoint could not be used"
	CompleteStatus    CompleteErrorKind = "the model endpoint returned an error status"
	CompleteMalformed CompleteErrorKind = "the model response is malformed"
	CompleteEmpty     CompleteErrorKind = "the model returned no text"
)

// CompleteError is every error the HTTP completer returns: fixed text, a
// status code and an egress reason, never the key, the endpoint, the
// prompt or a response body.
type CompleteError struct {
	Kind   CompleteErrorKind
	Status int
	Reason ports.EgressReason
}

func (e *CompleteError) Error() string {
	msg := "completion: " + string(e.Kind)
	if e.Reason != "" {
		msg += ": " + string(e.Reason)
	}
	if e.Status != 0 {
		msg += " (" + strconv.Itoa(e.Status) + ")"
	}
	return msg
}

// HTTPCompleter is the Anthropic Messages or OpenAI-compatible
// chat-completions ports.Completer. Every call goes through the guarded
// egress to the configured endpoint only, redirects refused (a redirect
// could carry the key elsewhere), bounded in time and size, and the answer
// is parsed strictly. It is safe for concurrent use.
type HTTPCompleter struct {
	cfg    CompleterConfig
	egress ports.Egress
	header map[string]string
}

var _ ports.Completer = (*HTTPCompleter)(nil)

// NewHTTPCompleter validates cfg. Errors name the problem, never the
// endpoint or the key.
func NewHTTPCompleter(cfg CompleterConfig, egress ports.Egress) (*HTTPCompleter, error) {
	if egress == nil {
		return nil, errors.New("httpx: the completer needs an egress")
	}
	if cfg.Provider != ProviderAnthropic && cfg.Provider != ProviderOpenAI {
		return nil, errors.New("httpx: the completion provider must be anthropic or openai")
	}
	if cfg.Endpoint == "" && cfg.Provider == ProviderAnthropic {
		cfg.Endpoint = DefaultAnthropicEndpoint
	}
	if cfg.Endpoint == "" {
		return nil, errors.New("httpx: the completion endpoint is required")
	}
	u, d := security.ParseURL(cfg.Endpoint)
	if d.Allowed {
		_, d = security.CheckURL(u, ToASCII)
	}
	if !d.Allowed {
		return nil, errors.New("httpx: the completion endpoint is not usable: " + string(d.Reason))
	}
	if cfg.MaxResponseBytes < 0 || cfg.Timeout < 0 {
		return nil, errors.New("httpx: completion limits must not be negative")
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = DefaultCompletionMaxResponseBytes
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultCompletionTimeout
	}
	header := map[string]string{"Content-Type": "application/json", "Accept": "application/json"}
	if cfg.APIKey != "" {
		name, value := "Authorization", "Bearer "+cfg.APIKey
		if cfg.Provider == ProviderAnthropic {
			name, value = "x-api-key", cfg.APIKey
		}
		if !httpguts.ValidHeaderFieldValue(value) {
			return nil, errors.New("httpx: the completion API key is not a valid header value")
		}
		header[name] = value
	}
	if cfg.Provider == ProviderAnthropic {
		header["anthropic-version"] = AnthropicVersion
	}
	return &HTTPCompleter{cfg: cfg, egress: egress, header: header}, nil
}

// String describes the completer without its key or endpoint.
func (c *HTTPCompleter) String() string {
	return "httpx.HTTPCompleter{Provider:" + c.cfg.Provider + " Model:" + strconv.Quote(c.cfg.Model) + "}"
}

// GoString is String, so %#v cannot print the key either.
func (c *HTTPCompleter) GoString() string { return c.String() }

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anthropicRequest struct {
	Model     string        `json:"model,omitempty"`
	MaxTokens int           `json:"max_tokens"`
	System    string        `json:"system,omitempty"`
	Messages  []chatMessage `json:"messages"`
}

type anthropicResponse struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

type openAIRequest struct {
	Model     string        `json:"model,omitempty"`
	MaxTokens int           `json:"max_tokens"`
	Messages  []chatMessage `json:"messages"`
}

type openAIResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
}

// Complete sends one request and returns the model's text.
func (c *HTTPCompleter) Complete(ctx context.Context, req ports.CompletionRequest) (string, error) {
	var payload any
	if c.cfg.Provider == ProviderAnthropic {
		payload = anthropicRequest{Model: c.cfg.Model, MaxTokens: req.MaxTokens, System: req.System,
			Messages: []chatMessage{{Role: "user", Content: req.Prompt}}}
	} else {
		msgs := []chatMessage{{Role: "user", Content: req.Prompt}}
		if req.System != "" {
			msgs = append([]chatMessage{{Role: "system", Content: req.System}}, msgs...)
		}
		payload = openAIRequest{Model: c.cfg.Model, MaxTokens: req.MaxTokens, Messages: msgs}
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return "", &CompleteError{Kind: CompleteMalformed}
	}
	resp, err := c.egress.Fetch(ctx, ports.FetchRequest{
		Method:       http.MethodPost,
		URL:          c.cfg.Endpoint,
		Headers:      c.header,
		Body:         body,
		MaxBytes:     c.cfg.MaxResponseBytes,
		Timeout:      c.cfg.Timeout,
		MaxRedirects: 0,
		Internal:     c.cfg.Internal,
	})
	if err != nil {
		reason := ports.EgressReasonOf(err)
		if reason == "" {
			reason = ports.EgressProtocol
		}
		return "", &CompleteError{Kind: CompleteEgress, Reason: reason}
	}
	if resp.Status < 200 || resp.Status > 299 {
		return "", &CompleteError{Kind: CompleteStatus, Status: resp.Status}
	}
	return c.parse(resp.Body)
}

// parse reads exactly one JSON object and joins its text parts. The body
// never reaches an error.
func (c *HTTPCompleter) parse(body []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var parts []string
	if c.cfg.Provider == ProviderAnthropic {
		var r anthropicResponse
		if err := dec.Decode(&r); err != nil {
			return "", &CompleteError{Kind: CompleteMalformed}
		}
		for _, b := range r.Content {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
	} else {
		var r openAIResponse
		if err := dec.Decode(&r); err != nil {
			return "", &CompleteError{Kind: CompleteMalformed}
		}
		if len(r.Choices) > 0 && r.Choices[0].Message.Content != nil {
			parts = append(parts, *r.Choices[0].Message.Content)
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", &CompleteError{Kind: CompleteMalformed}
	}
	text := strings.Join(parts, "")
	if strings.TrimSpace(text) == "" {
		return "", &CompleteError{Kind: CompleteEmpty}
	}
	return text, nil
}
