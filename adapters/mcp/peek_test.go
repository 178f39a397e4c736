package mcp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// peekSeeds are messages peekCall must read as encoding/json does, or
// leave to it: plain calls, the 2026-07-28 leg's _meta, escapes, case
// variants, duplicates, odd shapes and broken JSON.
var peekSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"2 * (3 + 4)"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"loadtest","version":"1"}},"name":"calculate","arguments":{"a":[1,{"name":"x"}]}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"summarize_document"}}`,
	`{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"nope","arguments":{}}}`,
	` { "method" : "tools/call" , "params" : { "arguments" : { "s" : "}\"," } , "name" : "calculate" } } `,
	`{"method":"tools/call","params":{"name":"calc\u0075late"}}`,
	`{"method":"tools/call","params":{"name":"nope","name":"calculate"}}`,
	`{"method":"tools/call","params":{"name":"calculate"},"params":{"name":"nope"}}`,
	`{"method":"tools/call","params":{"NAME":"nope","name":"calculate"}}`,
	`{"method":"tools/call","params":{"name":"calculate","Name":"nope"}}`,
	`{"Method":"tools/call","params":{"name":"nope"}}`,
	`{"method":"tools/call","PARAMS":{"name":"nope"}}`,
	`{"method":"tools/call","param\u0073":{"name":"nope"}}`,
	`{"method":"tools/call","paramſ":{"name":"nope"}}`,
	`{"method":"tools/call","params":{"name":null}}`,
	`{"method":"tools/call","params":null}`,
	`{"method":"tools/call","params":{"name":5}}`,
	`{"method":"tools/call","params":{"name":"calculate"}} x`,
	`{"method":"tools/call","params":{"name":"calculate"}`,
	`{"method":"tools/call","params":{"name":"calculate","arguments":{"x":[1,2}}}`,
	`[{"method":"tools/call","params":{"name":"nope"}}]`,
	`{"method":"tools/call","params":{"name":"caf` + "\xc3\xa9" + `"}}`,
	`{"method":"tools/call","params":{"name":"nope\u0000"}}`,
	`{"method":"tools/list","params":{"name":"nope"}}`,
	`{"method":"tools/call","params":{}}`,
	`{"method":"tools/call"}`,
	`{}`,
	``,
}

// oracleReroute is reroute's exact path for tools/call and prompts/get:
// decode with encoding/json, then rewrite an unknown name.
func oracleReroute(s *Server, body []byte) []byte {
	var peek struct {
		Method string `json:"method"`
		Params struct {
			Name *string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &peek) != nil || peek.Params.Name == nil {
		return body
	}
	switch {
	case peek.Method == string(mcp.MethodToolsCall) && !s.isTool(*peek.Params.Name):
		return replaceParam(body, nil, "name", unknownTool)
	case peek.Method == string(mcp.MethodPromptsGet) && !s.isPrompt(*peek.Params.Name):
		return replaceParam(body, nil, "name", unknownPrompt)
	}
	return body
}

// checkPeek checks one message: what peekCall reads is what encoding/json
// decodes, and reroute answers exactly as the decoding path would.
func checkPeek(t *testing.T, s *Server, body []byte) {
	if method, name, hasName, ok := peekCall(body); ok {
		var ref struct {
			Method string `json:"method"`
			Params struct {
				Name *string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &ref) == nil {
			if ref.Method != method || (ref.Params.Name != nil) != hasName || hasName && *ref.Params.Name != name {
				t.Errorf("%q: peek read method %q name %q (%v), encoding/json %q %v", body, method, name, hasName, ref.Method, ref.Params.Name)
			}
		}
	}
	if bytes.Contains(body, []byte("resources/read")) {
		return
	}
	if got, want := s.reroute(body, nil), oracleReroute(s, body); !bytes.Equal(got, want) {
		t.Errorf("%q: reroute gave %q, the decoding path %q", body, got, want)
	}
}

func TestPeekCallAgreesWithEncodingJSON(t *testing.T) {
	s := testServer(t)
	for _, b := range peekSeeds {
		checkPeek(t, s, []byte(b))
	}
	// The plain calls are read without decoding.
	for _, b := range peekSeeds[:5] {
		if _, _, _, ok := peekCall([]byte(b)); !ok {
			t.Errorf("%s: not read by the scan", b)
		}
	}
}

func FuzzPeekCall(f *testing.F) {
	for _, b := range peekSeeds {
		f.Add([]byte(b))
	}
	s := testServer(&testing.T{})
	f.Fuzz(func(t *testing.T, body []byte) { checkPeek(t, s, body) })
}
