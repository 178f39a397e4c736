package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// reroute rewrites a tools/call or prompts/get naming something that is not
// registered so it names the sentinel instead. mcp-go would otherwise answer
// such a call itself, echoing the name, with a different error than the one
// the guard chain gives a caller whose scopes hide a real component. After
// the rewrite both meet the same chain: one answer, one audit line.
//
// hdr, when non-nil, is the HTTP request's header; the 2026-07-28 leg
// mirrors the name in Mcp-Name, which must keep matching the body.
func (s *Server) reroute(body []byte, hdr http.Header) []byte {
	// Fast path: most messages are not name-addressed calls.
	if !bytes.Contains(body, []byte(`tools/call`)) && !bytes.Contains(body, []byte(`prompts/get`)) {
		return body
	}
	// A typed peek is cheap (no maps); the full rewrite below runs only for
	// a name that is actually unknown.
	var peek struct {
		Method string `json:"method"`
		Params struct {
			Name *string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &peek) != nil || peek.Params.Name == nil {
		return body
	}
	var sentinel string
	var known func(string) bool
	switch peek.Method {
	case string(mcp.MethodToolsCall):
		sentinel, known = unknownTool, s.isTool
	case string(mcp.MethodPromptsGet):
		sentinel, known = unknownPrompt, s.isPrompt
	default:
		return body
	}
	if known(*peek.Params.Name) {
		return body
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		return body
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params == nil {
		return body
	}
	params["name"], _ = json.Marshal(sentinel)
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	if err != nil {
		return body
	}
	if hdr != nil && hdr.Get(mcp.HeaderName) != "" {
		if v, ok := mcp.EncodeHeaderValue(sentinel); ok {
			hdr.Set(mcp.HeaderName, v)
		}
	}
	return out
}

func (s *Server) isTool(name string) bool { return s.toolNames[name] }

func (s *Server) isPrompt(name string) bool { return s.promptNames[name] }
