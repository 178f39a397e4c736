package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

const canary = "CANARY-e2e-5d1c0ffee-must-not-be-logged"

func TestStdioCoreFamily(t *testing.T) {
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			c, stderr := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "core"}, leg.opts...)
			names := strings.Join(toolNames(t, c), ",")
			if names != "calculate,read_file,safe_fetch" {
				t.Fatalf("tools = %s", names)
			}

			r := call(t, c, "calculate", map[string]any{"expression": "2 * (3 + 4)"})
			if r.IsError || text(r) != "14" {
				t.Fatalf("calculate: %+v", r)
			}
			if sc, _ := r.StructuredContent.(map[string]any); sc["text"] != "14" {
				t.Fatalf("structured content: %#v", r.StructuredContent)
			}

			r = call(t, c, "read_file", map[string]any{"path": "welcome.txt"})
			if r.IsError || !strings.Contains(text(r), "hello from the sandbox") || !strings.Contains(text(r), "UNTRUSTED-DATA-BEGIN") {
				t.Fatalf("read_file: %+v", r)
			}

			for _, bad := range []string{"../../etc/passwd", "/etc/passwd", "a\x00b"} {
				r = call(t, c, "read_file", map[string]any{"path": bad})
				if !r.IsError || strings.Contains(text(r), "passwd") {
					t.Fatalf("read_file(%q) was not refused cleanly: %s", bad, text(r))
				}
			}

			r = call(t, c, "safe_fetch", map[string]any{"url": "http://169.254.169.254/latest/meta-data/"})
			if !r.IsError || strings.Contains(text(r), "169.254") {
				t.Fatalf("safe_fetch to metadata not refused cleanly: %s", text(r))
			}

			r = call(t, c, "no_such_tool", map[string]any{"x": canary})
			if !r.IsError || text(r) != "Unknown tool." {
				t.Fatalf("unknown tool: %+v", r)
			}

			r = call(t, c, "calculate", map[string]any{"expression": canary})
			if !r.IsError {
				t.Fatal("a canary expression was evaluated")
			}

			res, err := c.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "arrowhead://integrity"}})
			if err != nil || len(res.Contents) != 1 {
				t.Fatalf("integrity: %v", err)
			}

			// The audit log (stderr over stdio) has a line per call and
			// never the canary.
			waitFor(t, func() bool { return strings.Count(stderr.String(), `"msg":"audit"`) >= 9 })
			if strings.Contains(stderr.String(), canary) {
				t.Fatal("the canary reached the log")
			}
			for _, line := range strings.Split(stderr.String(), "\n") {
				if !strings.Contains(line, `"msg":"audit"`) {
					continue
				}
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("audit line is not JSON: %q", line)
				}
				for _, k := range []string{"time", "subject", "component", "name", "args", "status", "latency_ms", "trace_id"} {
					if _, ok := rec[k]; !ok {
						t.Fatalf("audit line lacks %s: %s", k, line)
					}
				}
			}
		})
	}
}

func TestStdioKillSwitchAndRateLimit(t *testing.T) {
	c, stderr := startStdio(t, map[string]string{
		"ARROWHEAD_PROFILE":              "core",
		"ARROWHEAD_DISABLED_TOOLS":       "read_file",
		"ARROWHEAD_CALCULATE_PER_MINUTE": "2",
	})
	if names := strings.Join(toolNames(t, c), ","); names != "calculate,safe_fetch" {
		t.Fatalf("a disabled tool is listed: %s", names)
	}
	r := call(t, c, "read_file", map[string]any{"path": "welcome.txt"})
	if !r.IsError || !strings.Contains(text(r), "disabled") {
		t.Fatalf("disabled tool ran: %s", text(r))
	}
	for i := 0; i < 2; i++ {
		if r := call(t, c, "calculate", map[string]any{"expression": "1+1"}); r.IsError {
			t.Fatalf("call %d refused: %s", i, text(r))
		}
	}
	r = call(t, c, "calculate", map[string]any{"expression": "1+1"})
	if !r.IsError || !strings.Contains(text(r), "Rate limit") {
		t.Fatalf("third call not limited: %s", text(r))
	}
	meta, _ := json.Marshal(r.Meta)
	if !strings.Contains(string(meta), "retry_after_seconds") {
		t.Fatalf("no retry hint in %s", meta)
	}
	waitFor(t, func() bool {
		return strings.Contains(stderr.String(), `"refusal":"disabled"`) && strings.Contains(stderr.String(), `"refusal":"rate_limited"`)
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("condition not met in time")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
