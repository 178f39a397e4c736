package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/sandboxtest"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// refusals are start-ups the server refuses, and what the reason names.
var refusals = []struct {
	name  string
	extra map[string]string
	want  string
	// asRoot: only a root server refuses (a private temporary directory
	// keeps uid 65534 out of the default scratch root).
	asRoot bool
}{
	{"missing test program", map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_EXEC_ENABLED": "true",
		"ARROWHEAD_EXEC_TEST_COMMAND": "no-such-test-runner-xyz ./..."}, "ARROWHEAD_EXEC_TEST_COMMAND: ", false},
	{"missing scratch access", map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_EXEC_ENABLED": "true"}, "ARROWHEAD_EXEC_WORKDIR: ", true},
	{"invalid setting", map[string]string{"ARROWHEAD_PROFILE": "everything"}, "ARROWHEAD_PROFILE", false},
}

// TestStdioStartUpRefusalReachesTheClient: when the server refuses to
// start, mcp-go's client gets the reason as the answer to its first
// request, not a closed connection, and the same reason is on stderr.
func TestStdioStartUpRefusalReachesTheClient(t *testing.T) {
	for _, r := range refusals {
		if r.asRoot && os.Geteuid() != 0 {
			continue
		}
		for _, leg := range legs {
			t.Run(r.name+"/"+leg.name, func(t *testing.T) {
				dir := t.TempDir()
				stderr := &syncBuffer{}
				tr := transport.NewStdioWithOptions(binary, baseEnv(t, dir, refusalEnv(t, r.extra)), nil,
					transport.WithCommandStderrWriter(stderr),
					transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
						cmd := exec.CommandContext(ctx, command, args...)
						cmd.Env, cmd.Dir = env, dir
						return cmd, nil
					}))
				if err := tr.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				c := client.NewClient(tr, leg.opts...)
				t.Cleanup(func() { _ = c.Close() })
				if err := c.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				var req mcp.InitializeRequest
				req.Params.ClientInfo = mcp.Implementation{Name: "arrowhead-e2e", Version: "1"}
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				_, err := c.Initialize(ctx, req)
				if err == nil || !strings.Contains(err.Error(), r.want) {
					t.Fatalf("initialize: %v; want the refusal naming %s (stderr %q)", err, r.want, stderr.String())
				}
				// mcp-go copies the child's stderr on a goroutine of its own,
				// which may still be behind the answer the client already
				// read: give it a bounded moment to catch up.
				for end := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), r.want) && time.Now().Before(end); {
					time.Sleep(10 * time.Millisecond)
				}
				if !strings.Contains(stderr.String(), r.want) {
					t.Errorf("stderr %q lacks the reason", stderr.String())
				}
			})
		}
	}
}

// TestStdioStartUpRefusalExitsNonZero: the refusing server answers one
// request and exits with a failure status.
func TestStdioStartUpRefusalExitsNonZero(t *testing.T) {
	for _, r := range refusals {
		if r.asRoot && os.Geteuid() != 0 {
			continue
		}
		dir := t.TempDir()
		cmd := exec.Command(binary)
		cmd.Env, cmd.Dir = baseEnv(t, dir, refusalEnv(t, r.extra)), dir
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			`{"jsonrpc":"2.0","id":"first","method":"initialize","params":{}}` + "\n")
		out, err := cmd.Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Fatalf("%s: exit %v", r.name, err)
		}
		line := strings.TrimSpace(string(out))
		if !strings.HasPrefix(line, `{"error":{"code":-32000,"message":"arrowhead: `) || !strings.Contains(line, `"id":"first"`) ||
			!strings.Contains(line, r.want) || strings.Count(line, "\n") != 0 {
			t.Errorf("%s: answer %q", r.name, line)
		}
	}
}

// refusalEnv gives a refusal case that enables exec a scratch root the
// sandbox uid can reach, unless the case is about that root.
func refusalEnv(t *testing.T, extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range extra {
		out[k] = v
	}
	if out["ARROWHEAD_EXEC_TEST_COMMAND"] != "" {
		out["ARROWHEAD_EXEC_WORKDIR"] = sandboxtest.Workdir(t)
	}
	return out
}
