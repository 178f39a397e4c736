package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
)

// TestAuditLogOfTwoReplicasVerifies runs two stdio servers sharing a data
// directory (so one attestation key), calls each, stops them by closing
// stdin, and verifies their stderr with arrowhead audit verify: both
// chains end with a shutdown checkpoint. A deleted line is then named.
func TestAuditLogOfTwoReplicasVerifies(t *testing.T) {
	dir := t.TempDir()
	env := baseEnv(t, dir, map[string]string{"ARROWHEAD_PROFILE": "core", "ARROWHEAD_AUDIT_CHECKPOINT_LINES": "2"})
	logs := make([]string, 2)
	for i := range logs {
		var stderr syncBuffer
		tr := transport.NewStdioWithOptions(binary, env, nil,
			transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
				cmd := exec.CommandContext(ctx, command, args...)
				cmd.Env, cmd.Dir = env, dir
				// Stderr straight to the buffer, so the lines written
				// after stdin closes (the shutdown checkpoint) are kept:
				// Wait copies them all.
				cmd.Stderr = &stderr
				return cmd, nil
			}))
		if err := tr.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(tr)
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		initialize(t, c)
		for _, expr := range []string{"1 + 2", "3 * 4", "10 / 5"} {
			if r := call(t, c, "calculate", map[string]any{"expression": expr}); r.IsError {
				t.Fatalf("calculate: %s", text(r))
			}
		}
		if err := c.Close(); err != nil {
			t.Fatalf("closing the session: %v", err)
		}
		logs[i] = filepath.Join(dir, []string{"a.log", "b.log"}[i])
		if err := os.WriteFile(logs[i], []byte(stderr.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	key := filepath.Join(dir, "data", "attestation-key.pem")

	out, code := verifyAudit(t, "--key", key, logs[0], logs[1])
	if code != 0 || strings.Count(out, "closed by its shutdown checkpoint") != 2 || !strings.Contains(out, "in 2 chains") {
		t.Fatalf("exit %d:\n%s", code, out)
	}

	// Delete a.log's second audit line (seq 2).
	text, _ := os.ReadFile(logs[0])
	lines := strings.SplitAfter(string(text), "\n")
	n := 0
	for i, l := range lines {
		if strings.Contains(l, `"msg":"audit"`) {
			if n++; n == 2 {
				lines = append(lines[:i], lines[i+1:]...)
				break
			}
		}
	}
	if err := os.WriteFile(logs[0], []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = verifyAudit(t, "--key", key, logs[0], logs[1])
	if code != 1 || !strings.Contains(out, "deleted: seq 2 missing between seq 1 at "+logs[0]+":") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func verifyAudit(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"audit", "verify"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}
