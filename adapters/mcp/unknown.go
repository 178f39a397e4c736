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
	if s.allNamesKnown(body) {
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

// allNamesKnown is the fast path for the common call: when every
// "name":"..." string in the message is a registered tool or prompt name,
// whatever params.name is, it is known. Any escape sequence sends the
// message to the exact check, since a key can be spelled with escapes.
func (s *Server) allNamesKnown(body []byte) bool {
	if bytes.IndexByte(body, '\\') >= 0 {
		return false
	}
	const key = `"name"`
	found := false
	for rest := body; ; {
		i := bytes.Index(rest, []byte(key))
		if i < 0 {
			return found
		}
		rest = bytes.TrimLeft(rest[i+len(key):], " \t\r\n")
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		rest = bytes.TrimLeft(rest[1:], " \t\r\n")
		if len(rest) == 0 || rest[0] != '"' {
			return false
		}
		end := bytes.IndexByte(rest[1:], '"')
		if end < 0 {
			return false
		}
		name := string(rest[1 : 1+end])
		if !s.toolNames[name] && !s.promptNames[name] {
			return false
		}
		found = true
		rest = rest[1+end:]
	}
}
