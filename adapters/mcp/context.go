package mcp

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// W3C trace-context keys, in _meta and as HTTP headers.
const (
	traceParentKey = "traceparent"
	traceStateKey  = "tracestate"
	// maxTraceFieldBytes bounds a trace-context value taken from a caller.
	maxTraceFieldBytes = 512
)

type headerKey struct{}

// withHeaders remembers the HTTP request headers for components whose
// request type does not carry them.
func withHeaders(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, headerKey{}, h)
}

// carrier collects the caller's W3C trace context: _meta first, then the
// HTTP headers.
func carrier(meta *mcp.Meta, h http.Header, ctx context.Context) ports.TraceCarrier {
	c := ports.TraceCarrier{}
	if meta != nil {
		for _, k := range []string{traceParentKey, traceStateKey} {
			if v, ok := meta.AdditionalFields[k].(string); ok && len(v) <= maxTraceFieldBytes {
				c[k] = v
			}
		}
	}
	if h == nil {
		h, _ = ctx.Value(headerKey{}).(http.Header)
	}
	for _, k := range []string{traceParentKey, traceStateKey} {
		if _, ok := c[k]; ok {
			continue
		}
		if v := h.Get(k); v != "" && len(v) <= maxTraceFieldBytes {
			c[k] = v
		}
	}
	return c
}

// clientCaps reports whether the client can answer an elicitation: declared
// per request on the 2026-07-28 leg, at initialize on the handshake leg.
func clientCaps(ctx context.Context) catalog.ClientCaps {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		c := info.ClientCapabilities
		return catalog.ClientCaps{Elicitation: c != nil && c.Elicitation != nil, Sampling: c != nil && c.Sampling != nil}
	}
	sess := server.ClientSessionFromContext(ctx)
	if withInfo, ok := sess.(server.SessionWithClientInfo); ok {
		caps := withInfo.GetClientCapabilities()
		return catalog.ClientCaps{Elicitation: caps.Elicitation != nil, Sampling: caps.Sampling != nil}
	}
	return catalog.ClientCaps{}
}

// inputAnswers converts the client's answers to earlier input requests.
func inputAnswers(responses mcp.InputResponses) map[string]catalog.InputAnswer {
	if len(responses) == 0 {
		return nil
	}
	out := make(map[string]catalog.InputAnswer, len(responses))
	// An answer is decoded against the method of the request it answers,
	// which only the tool knows: read it both ways and let the tool use
	// the part it asked for (an elicitation's action and content, or a
	// sampling answer's text).
	for id := range responses {
		var ans catalog.InputAnswer
		found := false
		if el := server.ElicitationResponse(responses, id); el != nil {
			ans.Action = string(el.Action)
			ans.Content, _ = el.Content.(map[string]any)
			found = true
		}
		if sample := server.SamplingResponse(responses, id); sample != nil {
			ans.Text = samplingText(sample)
			found = true
		}
		if found {
			out[id] = ans
		}
	}
	return out
}

// progressReporter returns a function that sends progress notifications
// when the client sent a progress token, else nil.
func progressReporter(ctx context.Context, s *server.MCPServer, meta *mcp.Meta) func(done, total float64, message string) {
	if meta == nil || meta.ProgressToken == nil {
		return nil
	}
	token := meta.ProgressToken
	return func(done, total float64, message string) {
		params := map[string]any{"progressToken": token, "progress": done}
		if total > 0 {
			params["total"] = total
		}
		if message != "" {
			params["message"] = message
		}
		_ = s.SendNotificationToClient(ctx, "notifications/progress", params)
	}
}

// samplingText is the text of a sampling answer; any other content kind
// (images, audio) is dropped.
func samplingText(r *mcp.CreateMessageResult) string {
	switch c := r.Content.(type) {
	case mcp.TextContent:
		return c.Text
	case *mcp.TextContent:
		return c.Text
	case map[string]any:
		// A retried request carries the answer as plain JSON.
		if c["type"] == "text" {
			text, _ := c["text"].(string)
			return text
		}
	}
	return ""
}
