package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/attach"
)

// fileURL renders path as a file:// URL, percent-encoded as a client would.
func fileURL(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

func runHook(t *testing.T, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"hook"}, args...), stdin, &out, &errb)
	return code, out.String(), errb.String()
}

func claudeInput(t *testing.T, toolInput map[string]any) io.Reader {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"session_id": "s1", "cwd": "/", "hook_event_name": "PreToolUse", "permission_mode": "default",
		"tool_name": "mcp__arrowhead__doc_write", "tool_use_id": "toolu_1", "tool_input": toolInput,
	})
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

func TestHookAttachmentsRewritesARealFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "my notes.md")
	content := "# Plan\n\n- ship\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runHook(t, claudeInput(t, map[string]any{
		"path":       "plans/today.md",
		"attachment": map[string]any{"source": fileURL(path), "title": "kept"},
	}), "attachments", "--protocol=1")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var ans struct {
		HookSpecificOutput struct {
			HookEventName      string `json:"hookEventName"`
			PermissionDecision string `json:"permissionDecision"`
			UpdatedInput       struct {
				Path       string            `json:"path"`
				Attachment map[string]string `json:"attachment"`
			} `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(stdout), &ans); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	h := ans.HookSpecificOutput
	att := h.UpdatedInput.Attachment
	if h.HookEventName != "PreToolUse" || h.PermissionDecision != "allow" || h.UpdatedInput.Path != "plans/today.md" ||
		att["filename"] != "my notes.md" || att["mime_type"] != "text/markdown" || att["title"] != "kept" {
		t.Fatalf("answer: %s", stdout)
	}
	const prefix = "data:text/markdown;base64,"
	if !strings.HasPrefix(att["source"], prefix) {
		t.Fatalf("source %q", att["source"])
	}
	data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(att["source"], prefix))
	if err != nil || string(data) != content {
		t.Fatalf("decoded %q, %v", data, err)
	}
	// The server side accepts what the hook produced.
	r, err := attach.Resolve(attach.Attachment{Source: att["source"], Filename: att["filename"], MimeType: att["mime_type"]},
		[]string{".json", ".md", ".txt"}, 1<<20)
	if err != nil || string(r.Data) != content || r.Ext != ".md" {
		t.Fatalf("Resolve of the hook's output: %+v %v", r, err)
	}
}

func TestHookAttachmentsDeniesInTheClientsShape(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "s3cr3t-missing.md")

	code, stdout, _ := runHook(t, claudeInput(t, map[string]any{
		"attachment": map[string]any{"source": fileURL(missing)},
	}), "attachments")
	if code != exitOK || !strings.Contains(stdout, `"permissionDecision":"deny"`) ||
		!strings.Contains(stdout, "the file does not exist") || strings.Contains(stdout, "s3cr3t") || strings.Contains(stdout, dir) {
		t.Fatalf("claude deny: exit %d %s", code, stdout)
	}

	cursor, _ := json.Marshal(map[string]any{
		"hook_event_name": "preToolUse", "cursor_version": "2.4.0", "conversation_id": "c", "generation_id": "g",
		"tool_name": "MCP:doc_write", "tool_input": map[string]any{"attachments": []any{
			map[string]any{"source": "data:,x", "filename": "file://" + missing}}},
	})
	code, stdout, _ = runHook(t, bytes.NewReader(cursor), "attachments")
	var ans map[string]string
	if err := json.Unmarshal([]byte(stdout), &ans); err != nil {
		t.Fatalf("cursor answer: %v\n%s", err, stdout)
	}
	if code != exitOK || ans["permission"] != "deny" || !strings.Contains(ans["agent_message"], "attachments[0]: filename") ||
		strings.Contains(stdout, "s3cr3t") {
		t.Fatalf("cursor deny: exit %d %s", code, stdout)
	}
}

func TestHookAttachmentsPassThrough(t *testing.T) {
	code, stdout, _ := runHook(t, claudeInput(t, map[string]any{"content": "inline"}), "attachments")
	if code != exitOK || stdout != "{}\n" {
		t.Fatalf("no attachments: exit %d %q", code, stdout)
	}
	code, stdout, _ = runHook(t, strings.NewReader("not json"), "attachments")
	if code != exitOK || stdout != "{}\n" {
		t.Fatalf("garbage: exit %d %q", code, stdout)
	}
}

func TestHookAttachmentsBoundsStdin(t *testing.T) {
	big := io.MultiReader(strings.NewReader(`{"hook_event_name":"PreToolUse","tool_input":{"content":"`),
		io.LimitReader(repeatReader('a'), attach.MaxHookInputBytes))
	code, stdout, stderr := runHook(t, big, "attachments")
	if code != exitOK || stdout != "{}\n" || !strings.Contains(stderr, "64 MiB") {
		t.Fatalf("oversized stdin: exit %d %q %q", code, stdout, stderr)
	}
	code, stdout, _ = runHook(t, failingReader{}, "attachments")
	if code != exitFailure || stdout != "" {
		t.Fatalf("unreadable stdin: exit %d %q", code, stdout)
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestHookAttachmentsVersionAndFlags(t *testing.T) {
	code, stdout, _ := runHook(t, strings.NewReader(""), "attachments", "--version")
	if code != exitOK || stdout != "arrowhead hook attachments protocol=1\n" {
		t.Fatalf("--version: exit %d %q", code, stdout)
	}
	code, stdout, stderr := runHook(t, claudeInput(t, map[string]any{}), "attachments", "--protocol=2")
	if code != exitOK || stdout != "{}\n" || !strings.Contains(stderr, "protocol 2") || !strings.Contains(stderr, "upgrade arrowhead") {
		t.Fatalf("newer registration: exit %d %q %q", code, stdout, stderr)
	}
	for _, args := range [][]string{
		{"attachments", "--bogus"},
		{"attachments", "extra"},
		{"attachments", "--protocol=x"},
		{"nope"},
		{},
		{"print-config", "--client", "emacs"},
		{"print-config", "extra"},
	} {
		if code, _, _ := runHook(t, strings.NewReader(""), args...); code != exitUsage {
			t.Errorf("hook %v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, stdout, _ := runHook(t, nil, "help"); code != exitOK || !strings.Contains(stdout, "print-config") {
		t.Fatalf("help: exit %d %q", code, stdout)
	}
}

func TestHookPrintConfig(t *testing.T) {
	for _, c := range attach.Clients() {
		want, _ := attach.Setup(c)
		for _, spelling := range []string{string(c), strings.ReplaceAll(string(c), "_", "-")} {
			code, stdout, _ := runHook(t, nil, "print-config", "--client", spelling)
			if code != exitOK || stdout != want.Snippet+"\n" {
				t.Errorf("--client %s: exit %d\n%s", spelling, code, stdout)
			}
			if !strings.Contains(stdout, "--protocol=1") {
				t.Errorf("--client %s: no protocol stamp", spelling)
			}
		}
	}
	code, stdout, _ := runHook(t, nil, "print-config")
	if code != exitOK || strings.Count(stdout, attach.HookCommandLine()) != 4 {
		t.Fatalf("all clients: exit %d\n%s", code, stdout)
	}
	for _, c := range attach.Clients() {
		s, _ := attach.Setup(c)
		if !strings.Contains(stdout, s.Snippet) || !strings.Contains(stdout, s.ConfigFile) {
			t.Errorf("all clients: %s missing", c)
		}
	}
}
