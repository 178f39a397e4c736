package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// goodToken is the one bearer token the stand-in auth middleware admits.
const goodToken = "good"

// tokenAuth stands in for adapters/auth: it decides from the header alone.
func tokenAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+goodToken {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "unauthorized"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refusals records the reasons passed to HTTPOptions.Refused.
type refusals struct {
	mu      sync.Mutex
	reasons []string
}

func (f *refusals) record(_ *http.Request, reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reasons = append(f.reasons, reason)
}

func (f *refusals) has(reason string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.reasons {
		if r == reason {
			return true
		}
	}
	return false
}

// slowTool answers after hold, reporting whether its context survived.
func slowServer(t *testing.T, hold time.Duration) *Server {
	t.Helper()
	type out struct {
		Alive bool `json:"alive" jsonschema:"the call's context was not cancelled"`
	}
	tool := catalog.Define[struct{}, out](catalog.ToolDef{
		Name: "calculate", Family: catalog.FamilyCore, Scope: "tools:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 1000},
		Description: "x. Example: calculate()",
	}).Bind(func(ctx context.Context, _ catalog.Call, _ struct{}) (*catalog.Reply[out], error) {
		select {
		case <-time.After(hold):
		case <-ctx.Done():
		}
		alive := ctx.Err() == nil
		return catalog.Answer(out{Alive: alive}, fmt.Sprintf("alive=%v", alive)), nil
	})
	app, err := core.New(core.Deps{Settings: settings.Defaults(), Authorizer: portstest.AllowAll{}, Rates: &portstest.Counter{}, Audit: &portstest.Audit{},
		Tracer: nop.Tracer{}, Metrics: nop.Metrics{}, Clock: ports.SystemClock{},
		Families: []core.Member{coretest.Family(catalog.FamilyCore, core.Components{Tools: []catalog.ToolSpec{tool}})}})
	if err != nil {
		t.Fatal(err)
	}
	return New(app, Options{Name: "t", Version: "1", Principal: func(context.Context) ports.Principal {
		return ports.NewPrincipal("alice", "tools:read")
	}})
}

func serveHTTP(t *testing.T, s *Server, o HTTPOptions) string {
	t.Helper()
	h, _ := s.HTTPHandler(o)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// startUpload opens a POST /mcp whose chunked body has begun (one chunk of
// prefix bytes) and never ends. It returns a reader for the response.
func startUpload(t *testing.T, addr string, headers map[string]string, prefix int) *bufio.Reader {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var b strings.Builder
	fmt.Fprintf(&b, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n", addr)
	for k, v := range headers {
		if k == "Host" {
			continue
		}
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	head := b.String()
	if h, ok := headers["Host"]; ok {
		head = strings.Replace(head, "Host: "+addr, "Host: "+h, 1)
	}
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	go func() { // the server may close before taking it all
		_, _ = fmt.Fprintf(conn, "%x\r\n%s\r\n", prefix, strings.Repeat("x", prefix))
	}()
	return bufio.NewReader(conn)
}

// post sends one complete JSON-RPC message to /mcp, with token when set.
func post(t *testing.T, addr, body, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// statusWithin reads the response status, failing if none arrives in d.
func statusWithin(t *testing.T, br *bufio.Reader, d time.Duration) *http.Response {
	t.Helper()
	type result struct {
		resp *http.Response
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.ReadResponse(br, nil)
		got <- result{resp, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("reading the response: %v", r.err)
		}
		return r.resp
	case <-time.After(d):
		t.Fatalf("no response within %v while the body was still open", d)
		return nil
	}
}

// TestRefusalsNeverWaitForTheBody: Host, Origin and the token are decided
// from the headers; the refusal arrives while the body is still open and
// the connection is closed rather than drained.
func TestRefusalsNeverWaitForTheBody(t *testing.T) {
	rec := &refusals{}
	open := serveHTTP(t, testServer(t), HTTPOptions{Stateless: true, Auth: tokenAuth, Refused: rec.record,
		AllowedOrigins: []string{"https://mcp.test"}})
	listed := serveHTTP(t, testServer(t), HTTPOptions{Stateless: true, Auth: tokenAuth, Refused: rec.record,
		AllowedHosts: []string{"mcp.test"}})
	tests := []struct {
		name    string
		addr    string
		headers map[string]string
		want    int
	}{
		{"no token", open, nil, http.StatusUnauthorized},
		{"wrong token", open, map[string]string{"Authorization": "Bearer bad"}, http.StatusUnauthorized},
		{"rebound loopback Host", open, map[string]string{"Host": "evil.example", "Authorization": "Bearer " + goodToken}, http.StatusForbidden},
		{"foreign Origin", open, map[string]string{"Origin": "https://evil.example", "Authorization": "Bearer " + goodToken}, http.StatusForbidden},
		{"Host outside the allowlist", listed, map[string]string{"Host": "evil.example", "Authorization": "Bearer " + goodToken}, http.StatusForbidden},
		{"allowed Host, no token", listed, map[string]string{"Host": "mcp.test"}, http.StatusUnauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := statusWithin(t, startUpload(t, tc.addr, tc.headers, 64<<10), 3*time.Second)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if !resp.Close {
				t.Fatal("a refusal before the body was read kept the connection open")
			}
			if b, _ := io.ReadAll(resp.Body); strings.Contains(string(b), "evil") {
				t.Fatalf("the refusal quotes the caller's header: %s", b)
			}
		})
	}
	if !rec.has("host_not_allowed") || !rec.has("origin_not_allowed") {
		t.Fatalf("refusals not reported: %q", rec.reasons)
	}
}

// TestBodyDeadlineAndSlots: an admitted body that stalls is cut off at its
// deadline, and once the slots free a caller is served again on a
// reusable connection.
func TestBodyDeadlineAndSlots(t *testing.T) {
	rec := &refusals{}
	const deadline = 700 * time.Millisecond
	addr := serveHTTP(t, testServer(t), HTTPOptions{Stateless: true, Auth: tokenAuth, Refused: rec.record,
		BodyReadTimeout: deadline, MaxConcurrentBodies: 2})
	auth := map[string]string{"Authorization": "Bearer " + goodToken}

	stalled := []*bufio.Reader{startUpload(t, addr, auth, 16), startUpload(t, addr, auth, 16)}
	time.Sleep(deadline / 2) // both are admitted and hold a slot
	third := startUpload(t, addr, auth, 16)
	for i, br := range stalled {
		if resp := statusWithin(t, br, 5*time.Second); resp.StatusCode != http.StatusRequestTimeout {
			t.Fatalf("stalled body %d: status %d, want 408", i, resp.StatusCode)
		}
	}
	// The third waited for a slot; once one freed its own deadline cut its
	// stalled body off too.
	if resp := statusWithin(t, third, 5*time.Second); resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("request beyond the slots: status %d, want 408", resp.StatusCode)
	}
	if !rec.has("body_timeout") {
		t.Fatalf("refusals = %q, want body_timeout", rec.reasons)
	}

	// The slots are free again: a complete body is served.
	ok := post(t, addr, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, goodToken)
	ok.Body.Close()
	if ok.StatusCode != http.StatusOK || ok.Close {
		t.Fatalf("after the stalls: status %d, close %v; want 200 on a reusable connection", ok.StatusCode, ok.Close)
	}
}

// TestBusyWhenSlotsStayTaken: while a stalled body holds the only slot,
// a further request waits BodySlotWait and gets 503 with a Retry-After.
func TestBusyWhenSlotsStayTaken(t *testing.T) {
	rec := &refusals{}
	addr := serveHTTP(t, testServer(t), HTTPOptions{Stateless: true, Auth: tokenAuth, Refused: rec.record,
		BodyReadTimeout: 3 * time.Second, BodySlotWait: 300 * time.Millisecond, MaxConcurrentBodies: 1})
	auth := map[string]string{"Authorization": "Bearer " + goodToken}
	holder := startUpload(t, addr, auth, 16)
	time.Sleep(200 * time.Millisecond)
	waiter := startUpload(t, addr, auth, 16)
	resp := statusWithin(t, waiter, 2*time.Second)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !resp.Close {
		t.Fatalf("status %d Retry-After %q close %v; want 503 with Retry-After, closed", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close)
	}
	if resp := statusWithin(t, holder, 5*time.Second); resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("holder: status %d, want 408", resp.StatusCode)
	}
	if !rec.has("body_busy") {
		t.Fatalf("refusals = %q, want body_busy", rec.reasons)
	}
}

// TestBodyDeadlineDoesNotCutALongCall: the body deadline bounds the upload
// only; a call that runs past it keeps its context.
func TestBodyDeadlineDoesNotCutALongCall(t *testing.T) {
	const deadline = 300 * time.Millisecond
	addr := serveHTTP(t, slowServer(t, 3*deadline), HTTPOptions{Stateless: true, BodyReadTimeout: deadline})
	resp := post(t, addr, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculate","arguments":{}}}`, "")
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "alive=true") {
		t.Fatalf("long call: %d %s", resp.StatusCode, b)
	}
}
