package wire

import (
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/httpx"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/assist"
	"github.com/arrowhead-go/arrowhead/ports"
)

// openCompleter builds the configured model backend: nil for
// ARROWHEAD_LLM_PROVIDER=none (the assist tools then refuse as not
// configured), else the HTTP completer on the shared guarded egress, with
// the endpoint marked internal only when ARROWHEAD_LLM_INTERNAL_HOSTS names
// its exact pair.
func openCompleter(s *settings.Settings, egress ports.Egress) (ports.Completer, error) {
	if s.LLMProvider == "none" || s.LLMProvider == assist.ProviderSampling {
		// No HTTP backend: the assist tools refuse, or ask the client's
		// own model.
		return nil, nil
	}
	endpoint := s.LLMEndpoint
	if endpoint == "" && s.LLMProvider == httpx.ProviderAnthropic {
		endpoint = httpx.DefaultAnthropicEndpoint
	}
	c, err := httpx.NewHTTPCompleter(httpx.CompleterConfig{
		Provider: s.LLMProvider,
		Endpoint: endpoint,
		Model:    s.LLMModel,
		APIKey:   s.LLMAPIKey,
		Timeout:  settings.Seconds(s.LLMTimeoutSeconds),
		Internal: httpx.InternalEndpoint(endpoint, s.LLMInternalHosts),
	}, egress)
	if err != nil {
		return nil, fmt.Errorf("ARROWHEAD_LLM_ENDPOINT: %w", err)
	}
	return canaryCompleter{next: c}, nil
}
