package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

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

// requestIDKey is the _meta field the telemetry hooks put the JSON-RPC
// request id in. A caller's own value under it is overwritten before the
// handler runs.
const requestIDKey = "io.arrowhead/jsonrpc-request-id"

// maxRequestIDBytes bounds a request id recorded in telemetry.
const maxRequestIDBytes = 128

// stampRequestID records the JSON-RPC request id in *meta.
func stampRequestID(meta **mcp.Meta, id any) {
	var text string
	switch v := id.(type) {
	case string:
		text = v
	case float64:
		text = strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		text = string(v)
	case int64:
		text = strconv.FormatInt(v, 10)
	case int:
		text = strconv.Itoa(v)
	}
	if len(text) > maxRequestIDBytes {
		text = ""
	}
	if *meta == nil {
		*meta = &mcp.Meta{}
	}
	if (*meta).AdditionalFields == nil {
		(*meta).AdditionalFields = map[string]any{}
	}
	(*meta).AdditionalFields[requestIDKey] = text
}

// withCallMeta returns ctx carrying the call's protocol details for the
// telemetry adapter, when Options.Telemetry is on.
func (s *Server) withCallMeta(ctx context.Context, meta *mcp.Meta, uri string) context.Context {
	if !s.opts.Telemetry {
		return ctx
	}
	m := &ports.CallMeta{ProtocolVersion: server.RequestProtocolVersion(ctx), ResourceURI: uri}
	if meta != nil {
		m.RequestID, _ = meta.AdditionalFields[requestIDKey].(string)
	}
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		m.SessionID = sess.SessionID()
	}
	return ports.WithCallMeta(ctx, m)
}

type headerKey struct{}

// withHeaders remembers the HTTP request headers for components whose
// request type does not carry them.
func withHeaders(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, headerKey{}, h)
}

// carrier collects the caller's W3C trace context: _meta first, then the
// HTTP headers. It is nil when the caller sent none (the commonest call),
// which every tracer reads as empty, so that call allocates nothing here.
func carrier(meta *mcp.Meta, h http.Header, ctx context.Context) ports.TraceCarrier {
	var c ports.TraceCarrier
	set := func(k, v string) {
		if c == nil {
			c = ports.TraceCarrier{}
		}
		c[k] = v
	}
	if meta != nil {
		for _, k := range []string{traceParentKey, traceStateKey} {
			if v, ok := meta.AdditionalFields[k].(string); ok && len(v) <= maxTraceFieldBytes {
				set(k, v)
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
			set(k, v)
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
