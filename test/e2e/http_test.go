package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestHTTPListAndCallOnBothLegs(t *testing.T) {
	s := startHTTP(t, map[string]string{"ARROWHEAD_PROFILE": "core"})
	tok := s.token(t, "alice", "tools:read")
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			c := s.connect(t, tok, leg.opts...)
			if names := strings.Join(toolNames(t, c), ","); names != "calculate,read_file,safe_fetch" {
				t.Fatalf("tools = %s", names)
			}
			if r := call(t, c, "calculate", map[string]any{"expression": "6 * 7"}); r.IsError || text(r) != "42" {
				t.Fatalf("calculate: %s", text(r))
			}
			if r := call(t, c, "read_file", map[string]any{"path": "welcome.txt"}); r.IsError {
				t.Fatalf("read_file: %s", text(r))
			}
		})
	}
	// Over HTTP the audit log is on stdout and names the caller.
	waitFor(t, func() bool { return strings.Contains(s.stdout.String(), `"subject":"alice"`) })
}

func TestHTTPUnauthenticated(t *testing.T) {
	s := startHTTP(t, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for name, auth := range map[string]string{
		"no token":       "",
		"garbage":        "Bearer not-a-jwt",
		"wrong scheme":   "Basic YWxpY2U6cHc=",
		"expired":        "Bearer " + signToken(t, s.key, testIssuer, testAudience, "alice", []string{"tools:read"}, time.Now().Add(-time.Hour)),
		"wrong audience": "Bearer " + signToken(t, s.key, testIssuer, "https://other.test", "alice", []string{"tools:read"}, time.Now().Add(time.Hour)),
		"wrong issuer":   "Bearer " + signToken(t, s.key, "https://evil.test", testAudience, "alice", []string{"tools:read"}, time.Now().Add(time.Hour)),
	} {
		req, _ := http.NewRequest(http.MethodPost, s.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := `resource_metadata="` + testAudience + `/.well-known/oauth-protected-resource/mcp"`
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), want) {
			t.Errorf("%s: status %d, WWW-Authenticate %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	// The discovery document and the probes need no token.
	for path, want := range map[string]string{
		"/.well-known/oauth-protected-resource/mcp": `"authorization_servers"`,
		"/health": `"ok"`,
		"/ready":  `"status"`,
	} {
		resp, err := http.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
		if strings.Contains(string(b), "scopes_supported") {
			t.Errorf("%s advertises scopes", path)
		}
	}
	waitFor(t, func() bool { return strings.Contains(s.stdout.String(), `"refusal":"unauthenticated"`) })
}

func TestHTTPScopeFilteringAndUnknown(t *testing.T) {
	s := startHTTP(t, map[string]string{"ARROWHEAD_PROFILE": "core"})
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			c := s.connect(t, s.token(t, "bob", "docs:read"), leg.opts...)
			if names := toolNames(t, c); len(names) != 0 {
				t.Fatalf("an unscoped caller sees %v", names)
			}
			hidden := call(t, c, "calculate", map[string]any{"expression": "1+1"})
			missing := call(t, c, "definitely_not_a_tool", map[string]any{})
			if !hidden.IsError || !missing.IsError || text(hidden) != "Unknown tool." || text(hidden) != text(missing) {
				t.Fatalf("hidden %q vs missing %q", text(hidden), text(missing))
			}
			hm, _ := json.Marshal(hidden.Meta)
			mm, _ := json.Marshal(missing.Meta)
			if string(hm) != string(mm) {
				t.Fatalf("a hidden tool is distinguishable from a missing one: %s vs %s", hm, mm)
			}
		})
	}
}

func TestHTTPKillSwitchAndRateLimit(t *testing.T) {
	s := startHTTP(t, map[string]string{
		"ARROWHEAD_PROFILE":              "core",
		"ARROWHEAD_DISABLED_TOOLS":       "safe_fetch",
		"ARROWHEAD_CALCULATE_PER_MINUTE": "2",
	})
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			// Each leg uses its own caller, so each has its own budget.
			c := s.connect(t, s.token(t, "carol-"+leg.name, "tools:read"), leg.opts...)
			if names := strings.Join(toolNames(t, c), ","); names != "calculate,read_file" {
				t.Fatalf("tools = %s", names)
			}
			if r := call(t, c, "safe_fetch", map[string]any{"url": "https://example.com"}); !r.IsError || !strings.Contains(text(r), "disabled") {
				t.Fatalf("disabled tool: %s", text(r))
			}
			call(t, c, "calculate", map[string]any{"expression": "1"})
			call(t, c, "calculate", map[string]any{"expression": "1"})
			if r := call(t, c, "calculate", map[string]any{"expression": "1"}); !r.IsError || !strings.Contains(text(r), "Rate limit") {
				t.Fatalf("not limited: %s", text(r))
			}
		})
	}
}

func TestHTTPRebindingAndBodyCap(t *testing.T) {
	s := startHTTP(t, map[string]string{"ARROWHEAD_ALLOWED_HOSTS": "mcp.test", "ARROWHEAD_ALLOWED_ORIGINS": "https://mcp.test"})
	post := func(host, origin string, body io.Reader, token ...string) int {
		req, _ := http.NewRequest(http.MethodPost, s.url+"/mcp", body)
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		for _, tok := range token {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	small := func() io.Reader { return strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`) }
	if code := post("evil.example", "", small()); code != http.StatusForbidden {
		t.Fatalf("rebinding Host: %d", code)
	}
	if code := post("mcp.test", "https://evil.example", small()); code != http.StatusForbidden {
		t.Fatalf("foreign Origin: %d", code)
	}
	if code := post("mcp.test", "https://mcp.test", small()); code != http.StatusUnauthorized {
		t.Fatalf("allowed host should reach the token check: %d", code)
	}
	big := func() io.Reader {
		return strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"` + strings.Repeat("1", 9<<20) + `"}}}`)
	}
	// The token is decided before the body is read: without one, even an
	// oversized body gets the 401.
	if code := post("mcp.test", "", big()); code != http.StatusUnauthorized {
		t.Fatalf("oversized body without a token: %d", code)
	}
	if code := post("mcp.test", "", big(), s.token(t, "alice", "tools:read")); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d", code)
	}
}

// TestHTTPDrainsOnSIGTERM sends SIGTERM while a request is in flight and
// expects that request to complete before the process exits. The request
// uses Expect: 100-continue, so the 100 response proves the handler is
// already reading the body when the signal is sent: no timing guesses.
func TestHTTPDrainsOnSIGTERM(t *testing.T) {
	s := startHTTP(t, map[string]string{"ARROWHEAD_AUTH_ENABLED": "false", "ARROWHEAD_ALLOW_INSECURE_HTTP": "true", "ARROWHEAD_PROFILE": "core"})
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"20 + 22"}}}`
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: %s\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", mcp.LATEST_LEGACY_PROTOCOL_VERSION, len(body))
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, "100") {
		t.Fatalf("no 100 Continue: %q %v", status, err)
	}
	if _, err := br.ReadString('\n'); err != nil { // the blank line ending the interim response
		t.Fatal(err)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("in-flight request was dropped: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "42") {
		t.Fatalf("in-flight request: %d %s", resp.StatusCode, b)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("server exited with %v; stderr: %s", err, s.stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server did not exit after draining")
	}
	// Put the result back for the cleanup that waits on done.
	s.done <- nil
}

// TestCacheHints checks the list and read results carry private-scope TTLs
// on the 2026-07-28 leg, which defines the fields.
func TestCacheHints(t *testing.T) {
	s := startHTTP(t, map[string]string{"ARROWHEAD_PROFILE": "core", "ARROWHEAD_TOOL_LIST_TTL_MS": "120000", "ARROWHEAD_RESOURCE_READ_TTL_MS": "5000"})
	c := s.connect(t, s.token(t, "dana", "tools:read"))
	tools, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if ttl, ok := tools.TTL(); !ok || ttl != 120000 || tools.CacheScope != mcp.CacheScopePrivate {
		t.Fatalf("tools/list hints: %v %v %q", ttl, ok, tools.CacheScope)
	}
	res, err := c.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "arrowhead://integrity"}})
	if err != nil {
		t.Fatal(err)
	}
	if ttl, ok := res.TTL(); !ok || ttl != 5000 || res.CacheScope != mcp.CacheScopePrivate {
		t.Fatalf("resources/read hints: %v %v %q", ttl, ok, res.CacheScope)
	}
}
