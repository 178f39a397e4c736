// Package e2e drives the built arrowhead binary with mcp-go's own client,
// over stdio and streamable HTTP, on both protocol legs (the 2026-07-28
// sessionless leg and the initialize leg).
package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// binary is the arrowhead executable built once for the package.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "arrowhead-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "arrowhead")
	build := exec.Command("go", "build", "-o", binary, "../../cmd/arrowhead")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building arrowhead:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// legs are the two protocol eras every scenario runs on.
var legs = []struct {
	name string
	opts []client.ClientOption
}{
	{"2026-07-28", nil},
	{"initialize", []client.ClientOption{client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION)}},
}

// syncBuffer is a goroutine-safe buffer for a child's stderr.
type syncBuffer = coretest.SyncBuffer

// baseEnv is a clean environment: no ARROWHEAD_* from the developer's shell
// leaks in, and every file the server touches lives under dir.
func baseEnv(t *testing.T, dir string, extra map[string]string) []string {
	t.Helper()
	sandbox := filepath.Join(dir, "sandbox")
	if err := os.MkdirAll(sandbox, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sandbox, "welcome.txt"), []byte("hello from the sandbox\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"ARROWHEAD_JAIL_ROOT=" + sandbox,
		"ARROWHEAD_DOCS_ROOT=" + filepath.Join(dir, "documents"),
		"ARROWHEAD_MEMORY_ROOT=" + filepath.Join(dir, "memory"),
		"ARROWHEAD_DATA_DIR=" + filepath.Join(dir, "data"),
		"ARROWHEAD_REPO_ROOT=" + filepath.Join(dir, "repo"),
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// startStdio launches the binary over stdio and returns an initialized
// client and the child's stderr (where the audit log goes).
func startStdio(t *testing.T, extra map[string]string, opts ...client.ClientOption) (*client.Client, *syncBuffer) {
	t.Helper()
	return startStdioIn(t, t.TempDir(), extra, opts...)
}

// startStdioIn is startStdio over the files in dir: starting again in the
// same dir is a restart of the server.
func startStdioIn(t *testing.T, dir string, extra map[string]string, opts ...client.ClientOption) (*client.Client, *syncBuffer) {
	t.Helper()
	stderr := &syncBuffer{}
	tr := transport.NewStdioWithOptions(binary, baseEnv(t, dir, extra), nil,
		transport.WithCommandStderrWriter(stderr),
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = env
			cmd.Dir = dir
			return cmd, nil
		}))
	if err := tr.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, opts...)
	t.Cleanup(func() { _ = c.Close() })
	// Start is idempotent for the transport; it installs the client's
	// handlers for server-initiated requests (elicitation on the
	// initialize leg).
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	initialize(t, c)
	return c, stderr
}

// startStdioProcess is startStdioIn that also returns the server's
// process, for a test to SIGKILL, and initialize's error rather than
// failing on it.
func startStdioProcess(t *testing.T, dir string, extra map[string]string) (*client.Client, *exec.Cmd, error) {
	t.Helper()
	var cmd *exec.Cmd
	tr := transport.NewStdioWithOptions(binary, baseEnv(t, dir, extra), nil,
		transport.WithCommandStderrWriter(&syncBuffer{}),
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd = exec.CommandContext(ctx, command, args...)
			cmd.Env = env
			cmd.Dir = dir
			return cmd, nil
		}))
	if err := tr.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var req mcp.InitializeRequest
	req.Params.ClientInfo = mcp.Implementation{Name: "arrowhead-e2e", Version: "1"}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err := c.Initialize(ctx, req)
	return c, cmd, err
}

func initialize(t *testing.T, c *client.Client) {
	t.Helper()
	var req mcp.InitializeRequest
	req.Params.ClientInfo = mcp.Implementation{Name: "arrowhead-e2e", Version: "1"}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
}

// server is a running HTTP arrowhead.
type server struct {
	url    string
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	key    *rsa.PrivateKey
	done   chan error
}

const (
	testIssuer   = "https://idp.test"
	testAudience = "https://mcp.test"
)

// startHTTP launches the binary over streamable HTTP with OAuth on (a
// static public key) unless extra turns auth off.
func startHTTP(t *testing.T, extra map[string]string) *server {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return startHTTPWithKey(t, key, extra)
}

// startHTTPWithKey is startHTTP trusting key's tokens: replicas that share
// a key accept the same tokens.
func startHTTPWithKey(t *testing.T, key *rsa.PrivateKey, extra map[string]string) *server {
	t.Helper()
	dir := t.TempDir()
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	port := freePort(t)
	env := map[string]string{
		"ARROWHEAD_TRANSPORT":         "http",
		"ARROWHEAD_HOST":              "127.0.0.1",
		"ARROWHEAD_PORT":              strconv.Itoa(port),
		"ARROWHEAD_AUTH_ENABLED":      "true",
		"ARROWHEAD_OAUTH_ISSUER":      testIssuer,
		"ARROWHEAD_OAUTH_AUDIENCE":    testAudience,
		"ARROWHEAD_OAUTH_PUBLIC_KEY":  pemKey,
		"ARROWHEAD_SERVER_PUBLIC_URL": testAudience,
	}
	for k, v := range extra {
		env[k] = v
	}
	s := &server{url: "http://127.0.0.1:" + strconv.Itoa(port), stdout: &syncBuffer{}, stderr: &syncBuffer{}, key: key, done: make(chan error, 1)}
	s.cmd = exec.Command(binary)
	s.cmd.Env = baseEnv(t, dir, env)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-s.done:
			t.Fatalf("server exited early: %v\nstderr: %s", err, s.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("server did not become healthy; stderr: %s", s.stderr.String())
	return nil
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// token mints a bearer token signed by the server's trusted key.
func (s *server) token(t *testing.T, subject string, scopes ...string) string {
	t.Helper()
	return signToken(t, s.key, testIssuer, testAudience, subject, scopes, time.Now().Add(time.Hour))
}

func signToken(t *testing.T, key *rsa.PrivateKey, iss, aud, sub string, scopes []string, exp time.Time) string {
	t.Helper()
	tok, err := jwt.NewBuilder().Issuer(iss).Audience([]string{aud}).Subject(sub).
		IssuedAt(time.Now()).Expiration(exp).Claim("scope", strings.Join(scopes, " ")).Build()
	if err != nil {
		t.Fatal(err)
	}
	jk, err := jwk.FromRaw(key)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256, jk))
	if err != nil {
		t.Fatal(err)
	}
	return string(signed)
}

// connect returns an initialized streamable-HTTP client carrying token.
func (s *server) connect(t *testing.T, token string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	headers := map[string]string{}
	if token != "" {
		headers["Authorization"] = "Bearer " + token
	}
	tr, err := transport.NewStreamableHTTP(s.url+"/mcp", transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, opts...)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	initialize(t, c)
	return c
}

// call invokes a tool and returns its result.
func call(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}
