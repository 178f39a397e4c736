package mcp

import (
	"context"
	"net/url"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Unknown names meet the guard chain. mcp-go answers a tools/call or
// prompts/get naming something it has not registered itself, echoing the
// name, with a different error than the one the chain gives a caller whose
// scopes hide a real component; and it answers a resources/read whose URI
// no template matches the same way. The before-hooks below run after
// mcp-go has decoded the request (so they see exactly the name it will
// look up, and the 2026-07-28 Mcp-Name header has already been checked
// against the body the caller sent) and before it looks the name up: they
// point an unknown name at a sentinel the adapter registered, whose
// handler calls the core with no name. Both kinds of call then meet the
// same chain: one answer, one audit line, the unknown-name rate limit.

// rerouteUnknown installs the hooks on h.
func (s *Server) rerouteUnknown(h *server.Hooks) {
	h.AddBeforeCallTool(func(_ context.Context, _ any, req *mcp.CallToolRequest) {
		if !s.toolNames[req.Params.Name] {
			req.Params.Name = unknownTool
		}
	})
	h.AddBeforeGetPrompt(func(_ context.Context, _ any, req *mcp.GetPromptRequest) {
		if !s.promptNames[req.Params.Name] {
			req.Params.Name = unknownPrompt
		}
	})
	h.AddBeforeReadResource(func(_ context.Context, _ any, req *mcp.ReadResourceRequest) {
		req.Params.URI = s.resolvableURI(req.Params.URI)
	})
}

// unresolvedPrefix marks a resources/read URI that no registered template
// could match (mcp-go matches templates with an RFC 6570 expression that
// admits only URI characters, so a raw space, a non-ASCII letter or a stray
// "%" falls through every template, the catch-all included, and mcp-go
// would answer itself, echoing the URI). resolvableURI percent-encodes such
// a URI behind this prefix so it reaches the catch-all; readResource
// restores it exactly, and the core decides, refuses and audits it like
// any other. A caller who sends the prefix itself gains nothing: it is
// decoded to a URI the caller could have sent directly.
const unresolvedPrefix = "arrowhead-unresolved:"

// resolvableURI is uri when the catch-all template matches it, and
// otherwise uri escaped behind unresolvedPrefix, which it matches.
func (s *Server) resolvableURI(uri string) string {
	if s.catchAll.Regexp().MatchString(uri) {
		return uri
	}
	return unresolvedPrefix + url.PathEscape(uri)
}

// resolvedURI undoes resolvableURI.
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
