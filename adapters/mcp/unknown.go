package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

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
	if bytes.Contains(body, []byte(`resources/read`)) {
		if out, ok := s.rerouteURI(body, hdr); ok {
			return out
		}
	}
	if !bytes.Contains(body, []byte(`tools/call`)) && !bytes.Contains(body, []byte(`prompts/get`)) {
		return body
	}
	if method, name, hasName, ok := peekCall(body); ok {
		return s.rerouteName(body, hdr, method, name, hasName)
	}
	// Not plainly spelled: decode it as mcp-go will. A typed peek is cheap
	// (no maps); the full rewrite runs only for a name that is actually
	// unknown.
	var peek struct {
		Method string `json:"method"`
		Params struct {
			Name *string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &peek) != nil || peek.Params.Name == nil {
		return body
	}
	return s.rerouteName(body, hdr, peek.Method, *peek.Params.Name, true)
}

// rerouteName is reroute once the message's method and params.name are
// known.
func (s *Server) rerouteName(body []byte, hdr http.Header, method, name string, hasName bool) []byte {
	if !hasName {
		return body
	}
	var sentinel string
	var known func(string) bool
	switch method {
	case string(mcp.MethodToolsCall):
		sentinel, known = unknownTool, s.isTool
	case string(mcp.MethodPromptsGet):
		sentinel, known = unknownPrompt, s.isPrompt
	default:
		return body
	}
	if known(name) {
		return body
	}
	return replaceParam(body, hdr, "name", sentinel)
}

// replaceParam sets params[key] to value in a JSON-RPC message (and the
// Mcp-Name header that mirrors it, when present). A message it cannot
// parse is returned unchanged for mcp-go to refuse.
func replaceParam(body []byte, hdr http.Header, key, value string) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		return body
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params == nil {
		return body
	}
	params[key], _ = json.Marshal(value)
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	if err != nil {
		return body
	}
	if hdr != nil && hdr.Get(mcp.HeaderName) != "" {
		if v, ok := mcp.EncodeHeaderValue(value); ok {
			hdr.Set(mcp.HeaderName, v)
		}
	}
	return out
}

// unresolvedPrefix marks a resources/read URI that no registered template
// could match (mcp-go matches templates with an RFC 6570 expression that
// admits only URI characters, so a raw space, a non-ASCII letter or a stray
// "%" falls through every template, the catch-all included, and mcp-go
// would answer itself, echoing the URI). rerouteURI percent-encodes such a
// URI behind this prefix so it reaches the catch-all; readResource restores
// it exactly, and the core decides, refuses and audits it like any other.
// A caller who sends the prefix itself gains nothing: it is decoded to a
// URI the caller could have sent directly.
const unresolvedPrefix = "arrowhead-unresolved:"

// rerouteURI is reroute for resources/read; ok is false when body is
// some other message (one that merely mentions the method).
func (s *Server) rerouteURI(body []byte, hdr http.Header) (out []byte, ok bool) {
	var peek struct {
		Method string `json:"method"`
		Params struct {
			URI *string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &peek) != nil || peek.Method != string(mcp.MethodResourcesRead) {
		return body, false
	}
	if peek.Params.URI == nil || s.catchAll.Regexp().MatchString(*peek.Params.URI) {
		return body, true
	}
	return replaceParam(body, hdr, "uri", unresolvedPrefix+url.PathEscape(*peek.Params.URI)), true
}

// resolvedURI undoes rerouteURI.
func resolvedURI(uri string) string {
	rest, ok := strings.CutPrefix(uri, unresolvedPrefix)
	if !ok {
		return uri
	}
	orig, err := url.PathUnescape(rest)
	if err != nil {
		return uri
	}
	return orig
}

func (s *Server) isTool(name string) bool { return s.toolNames[name] }

func (s *Server) isPrompt(name string) bool { return s.promptNames[name] }
