package attach

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// fakeEntry is one file of the fake filesystem.
type fakeEntry struct {
	data string
	mode fs.FileMode
	// statSize, when non-zero, is the size Stat reports (a lying Stat).
	statSize int64
	// stream, when set, replaces data as what Read returns.
	stream func() io.Reader
	// openErr is returned by open instead of the file.
	openErr error
}

// fakeFS is an Opener over a map, recording every path it was asked for.
type fakeFS struct {
	files  map[string]fakeEntry
	opened []string
}

func (f *fakeFS) open(path string) (fs.File, error) {
	f.opened = append(f.opened, path)
	e, ok := f.files[path]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	if e.openErr != nil {
		return nil, e.openErr
	}
	r := io.Reader(strings.NewReader(e.data))
	if e.stream != nil {
		r = e.stream()
	}
	return &fakeFile{name: filepath.Base(path), e: e, r: r}, nil
}

type fakeFile struct {
	name string
	e    fakeEntry
	r    io.Reader
}

func (f *fakeFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *fakeFile) Close() error               { return nil }
func (f *fakeFile) Stat() (fs.FileInfo, error) { return fakeInfo{f}, nil }

type fakeInfo struct{ f *fakeFile }

func (i fakeInfo) Name() string { return i.f.name }
func (i fakeInfo) Size() int64 {
	if i.f.e.statSize != 0 {
		return i.f.e.statSize
	}
	return int64(len(i.f.e.data))
}
func (i fakeInfo) Mode() fs.FileMode  { return i.f.e.mode }
func (i fakeInfo) ModTime() time.Time { return time.Time{} }
func (i fakeInfo) IsDir() bool        { return i.f.e.mode.IsDir() }
func (i fakeInfo) Sys() any           { return nil }

func newFakeFS() *fakeFS {
	return &fakeFS{files: map[string]fakeEntry{
		"/home/user/notes.md":      {data: "# Notes\n\nship it <b>&</b>\n"},
		"/home/user/data.json":     {data: `{"k":1}`},
		"/home/user/My Notes.txt":  {data: "plain"},
		"/home/user/blob":          {data: "\x00\x01"},
		"/home/user/dir":           {mode: fs.ModeDir},
		"/home/user/locked.md":     {openErr: &fs.PathError{Op: "open", Path: "/home/user/locked.md", Err: fs.ErrPermission}},
		"/home/user/huge.md":       {statSize: MaxBytes + 1},
		"/home/user/growing.md":    {data: "tiny", stream: func() io.Reader { return io.LimitReader(zeros{}, MaxBytes+10) }},
		"/home/user/s3cr3tcanary":  {data: "x"},
		"/home/user/q?uery.md":     {data: "never read"},
		"/home/user/percent%2F.md": {data: "never read"},
	}}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func skipOnWindows(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fixtures use POSIX paths")
	}
}

// claudeEnv wraps a tool input in a Claude Code PreToolUse envelope.
func claudeEnv(toolInput string) string {
	return `{"session_id":"s1","transcript_path":"/tmp/t.jsonl","cwd":"/home/user","permission_mode":"default",` +
		`"hook_event_name":"PreToolUse","tool_name":"mcp__arrowhead__doc_write","tool_input":` + toolInput + `,"tool_use_id":"toolu_01"}`
}

func cursorEnv(event, toolInput string) string {
	return `{"hook_event_name":"` + event + `","conversation_id":"c1","generation_id":"g1","cursor_version":"2.4.0",` +
		`"workspace_roots":["/home/user"],"tool_name":"MCP:doc_write","tool_input":` + toolInput + `,"tool_use_id":"u1"}`
}

// answer is the union of the two answer shapes.
type answer struct {
	HookSpecificOutput *struct {
		HookEventName            string         `json:"hookEventName"`
		PermissionDecision       string         `json:"permissionDecision"`
		PermissionDecisionReason string         `json:"permissionDecisionReason"`
		UpdatedInput             map[string]any `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
	Permission   string         `json:"permission"`
	UserMessage  string         `json:"user_message"`
	AgentMessage string         `json:"agent_message"`
	UpdatedInput map[string]any `json:"updated_input"`
}

func run(t *testing.T, fsys *fakeFS, in string) (answer, string) {
	t.Helper()
	out, err := RunHook([]byte(in), fsys.open)
	if err != nil {
		t.Fatalf("RunHook: %v", err)
	}
	var a answer
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, out)
	}
	return a, string(out)
}

// claudeDecisionOf returns the decision and updated input of a Claude-shaped
// answer ("" for an empty, no-opinion answer).
func claudeDecisionOf(t *testing.T, a answer) (string, map[string]any) {
	t.Helper()
	if a.Permission != "" {
		t.Fatalf("Claude-family answer carries Cursor's permission field")
	}
	if a.HookSpecificOutput == nil {
		return "", nil
	}
	if a.HookSpecificOutput.HookEventName != "PreToolUse" {
		t.Fatalf("hookEventName %q", a.HookSpecificOutput.HookEventName)
	}
	return a.HookSpecificOutput.PermissionDecision, a.HookSpecificOutput.UpdatedInput
}

func dataURI(mime, content string) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString([]byte(content))
}

// TestHookScoping pins the seed's scoping contract: structural, top level,
// file:// only.
func TestHookScoping(t *testing.T) {
	skipOnWindows(t)
	notes := dataURI("text/markdown", "# Notes\n\nship it <b>&</b>\n")
	cases := []struct {
		name      string
		toolInput string
		// want is the rewritten tool input, or nil for "unchanged".
		want map[string]any
	}{
		{"attachment object", `{"attachment":{"source":"file:///home/user/notes.md"}}`,
			map[string]any{"attachment": map[string]any{"source": notes, "filename": "notes.md", "mime_type": "text/markdown"}}},
		{"attachments list", `{"attachments":[{"source":"file:///home/user/notes.md"}]}`,
			map[string]any{"attachments": []any{map[string]any{"source": notes, "filename": "notes.md", "mime_type": "text/markdown"}}}},
		{"https passes", `{"attachments":[{"source":"https://x"}]}`, nil},
		{"data passes", `{"attachment":{"source":"data:text/plain;base64,aGk="}}`, nil},
		{"top-level source untouched", `{"source":"file:///home/user/notes.md"}`, nil},
		{"no source key untouched", `{"attachment":{"url":"file:///home/user/notes.md"}}`, nil},
		{"non-string source untouched", `{"attachment":{"source":["file:///home/user/notes.md"]}}`, nil},
		{"attachment as list untouched", `{"attachment":[{"source":"file:///home/user/notes.md"}]}`, nil},
		{"attachments as object untouched", `{"attachments":{"source":"file:///home/user/notes.md"}}`, nil},
		{"nested attachment untouched", `{"message":{"attachment":{"source":"file:///home/user/notes.md"}}}`, nil},
		{"non-object items skipped", `{"attachments":["file:///home/user/notes.md",{"source":"file:///home/user/data.json"}]}`,
			map[string]any{"attachments": []any{"file:///home/user/notes.md",
				map[string]any{"source": dataURI("application/json", `{"k":1}`), "filename": "data.json", "mime_type": "application/json"}}}},
		{"unknown keys carried, given hints kept", `{"title":"T","n":12345678901234567890,"attachment":{"source":"FILE://LOCALHOST/home/user/My%20Notes.txt","filename":"renamed.md","mime_type":"text/markdown","title":"Linear's field","extra":{"a":[1,2]}}}`,
			map[string]any{"title": "T", "n": json.Number("12345678901234567890"), "attachment": map[string]any{
				"source": dataURI("text/markdown", "plain"), "filename": "renamed.md", "mime_type": "text/markdown",
				"title": "Linear's field", "extra": map[string]any{"a": []any{json.Number("1"), json.Number("2")}}}}},
		{"empty and null hints backfilled", `{"attachment":{"source":"file:///home/user/blob","filename":"","mime_type":null}}`,
			map[string]any{"attachment": map[string]any{"source": dataURI("application/octet-stream", "\x00\x01"),
				"filename": "blob", "mime_type": "application/octet-stream"}}},
		{"mime parameters dropped from the URI only", `{"attachment":{"source":"file:///home/user/notes.md","mime_type":"Text/Plain; charset=utf-8"}}`,
			map[string]any{"attachment": map[string]any{"source": dataURI("text/plain", "# Notes\n\nship it <b>&</b>\n"),
				"filename": "notes.md", "mime_type": "Text/Plain; charset=utf-8"}}},
		{"both keys", `{"attachment":{"source":"file:///home/user/data.json"},"attachments":[{"source":"file:///home/user/notes.md"},{"source":"data:,x"}]}`,
			map[string]any{
				"attachment":  map[string]any{"source": dataURI("application/json", `{"k":1}`), "filename": "data.json", "mime_type": "application/json"},
				"attachments": []any{map[string]any{"source": notes, "filename": "notes.md", "mime_type": "text/markdown"}, map[string]any{"source": "data:,x"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := newFakeFS()
			a, raw := run(t, fsys, claudeEnv(c.toolInput))
			decision, got := claudeDecisionOf(t, a)
			if c.want == nil {
				if raw != "{}\n" || len(fsys.opened) != 0 {
					t.Fatalf("want an unchanged call and no file read, got %s (opened %v)", raw, fsys.opened)
				}
				return
			}
			if decision != "allow" {
				t.Fatalf("decision %q: %s", decision, raw)
			}
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(c.want)
			if string(gotJSON) != string(wantJSON) {
				t.Fatalf("updatedInput\ngot:  %s\nwant: %s", gotJSON, wantJSON)
			}
		})
	}
}

// TestHookDenials covers every refusal: a deny in the client's shape, a
// reason naming the attachment's position, nothing of the input echoed, and
// no file read once validation fails.
func TestHookDenials(t *testing.T) {
	skipOnWindows(t)
	cases := []struct {
		name, toolInput, reason string
		// reads is how many files may be opened before the denial.
		reads int
	}{
		{"file in filename", `{"attachment":{"source":"data:,x","filename":"file:///home/user/s3cr3tcanary"}}`, "attachment: filename must not be a file: URL", 0},
		{"file in mime_type", `{"attachments":[{"source":"https://x","mime_type":"FILE:s3cr3tcanary"}]}`, "attachments[0]: mime_type must not be a file: URL", 0},
		{"host", `{"attachment":{"source":"file://evil.example/home/user/s3cr3tcanary"}}`, "names a host", 0},
		{"host with userinfo", `{"attachment":{"source":"file://user@localhost/home/user/s3cr3tcanary"}}`, "names a host", 0},
		{"host with port", `{"attachment":{"source":"file://localhost:80/home/user/s3cr3tcanary"}}`, "names a host", 0},
		{"no authority", `{"attachment":{"source":"file:/home/user/s3cr3tcanary"}}`, "file:///absolute/path", 0},
		{"relative", `{"attachment":{"source":"file:s3cr3tcanary"}}`, "file:///absolute/path", 0},
		{"host only", `{"attachment":{"source":"file://s3cr3tcanary"}}`, "file:///absolute/path", 0},
		{"query", `{"attachment":{"source":"file:///home/user/q?uery.md"}}`, "query or fragment", 0},
		{"fragment", `{"attachment":{"source":"file:///home/user/s3cr3tcanary#x"}}`, "query or fragment", 0},
		{"bad escape", `{"attachment":{"source":"file:///home/user/%zzs3cr3tcanary"}}`, "percent-encoding", 0},
		{"NUL", `{"attachment":{"source":"file:///home/user/s3cr3tcanary%00.md"}}`, "NUL", 0},
		{"bad mime", `{"attachment":{"source":"file:///home/user/notes.md","mime_type":"s3cr3tcanary"}}`, "mime_type is not a valid media type", 0},
		{"missing", `{"attachment":{"source":"file:///home/user/gone-s3cr3tcanary.md"}}`, "attachment: the file does not exist", 1},
		{"directory", `{"attachment":{"source":"file:///home/user/dir"}}`, "not a regular file", 1},
		{"permission", `{"attachment":{"source":"file:///home/user/locked.md"}}`, "could not be read", 1},
		{"too large by stat", `{"attachment":{"source":"file:///home/user/huge.md"}}`, "larger than 25 MiB", 1},
		{"too large by read", `{"attachment":{"source":"file:///home/user/growing.md"}}`, "larger than 25 MiB", 1},
		{"second item bad, nothing read", `{"attachments":[{"source":"file:///home/user/notes.md"},{"source":"file://evil/x"}]}`, "attachments[1]:", 0},
		{"second file missing", `{"attachments":[{"source":"file:///home/user/notes.md"},{"source":"file:///home/user/gone.md"}]}`, "attachments[1]: the file does not exist", 2},
	}
	for _, c := range cases {
		for _, client := range []string{"claude", "cursor"} {
			t.Run(c.name+"/"+client, func(t *testing.T) {
				fsys := newFakeFS()
				var in string
				if client == "claude" {
					in = claudeEnv(c.toolInput)
				} else {
					in = cursorEnv("preToolUse", c.toolInput)
				}
				a, raw := run(t, fsys, in)
				var reason string
				if client == "claude" {
					decision, updated := claudeDecisionOf(t, a)
					if decision != "deny" || updated != nil {
						t.Fatalf("want deny without input, got %s", raw)
					}
					reason = a.HookSpecificOutput.PermissionDecisionReason
				} else {
					if a.Permission != "deny" || a.UpdatedInput != nil || a.UserMessage != a.AgentMessage {
						t.Fatalf("want a Cursor deny, got %s", raw)
					}
					reason = a.AgentMessage
				}
				if !strings.HasPrefix(reason, denyPrefix) || !strings.Contains(reason, c.reason) {
					t.Fatalf("reason %q lacks %q", reason, c.reason)
				}
				for _, leak := range []string{"s3cr3tcanary", "/home", "evil", "gone", "notes.md"} {
					if strings.Contains(raw, leak) {
						t.Fatalf("answer echoes %q: %s", leak, raw)
					}
				}
				if len(fsys.opened) > c.reads {
					t.Fatalf("opened %d files, want at most %d", len(fsys.opened), c.reads)
				}
			})
		}
	}
}

func TestHookLimits(t *testing.T) {
	skipOnWindows(t)
	fsys := newFakeFS()
	var b strings.Builder
	b.WriteString(`{"attachments":[`)
	for i := 0; i <= MaxFilesPerCall; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"source":"file:///home/user/notes.md"}`)
	}
	b.WriteString("]}")
	a, raw := run(t, fsys, claudeEnv(b.String()))
	if d, _ := claudeDecisionOf(t, a); d != "deny" || !strings.Contains(raw, "more than 32 local files") || len(fsys.opened) != 0 {
		t.Fatalf("too many files: %s (opened %d)", raw, len(fsys.opened))
	}

	// The per-call budget, by Stat and by the bounded read.
	small := &fakeFS{files: map[string]fakeEntry{
		"/a": {data: "0123456789"},
		"/b": {data: "x", stream: func() io.Reader { return strings.NewReader("0123456789") }},
	}}
	if _, err := readAttachment(small.open, "/a", 9); !errors.Is(err, errCallTooLarge) {
		t.Fatalf("budget by stat: %v", err)
	}
	if _, err := readAttachment(small.open, "/b", 9); !errors.Is(err, errCallTooLarge) {
		t.Fatalf("budget by read: %v", err)
	}
	if data, err := readAttachment(small.open, "/a", 10); err != nil || string(data) != "0123456789" {
		t.Fatalf("within budget: %q %v", data, err)
	}
}

// TestHookDialects checks each client's shapes beyond the golden files:
// pass-through answers and Cursor's beforeMCPExecution.
func TestHookDialects(t *testing.T) {
	skipOnWindows(t)
	plain := `{"path":"a.md","content":"x"}`
	withFile := `{"attachment":{"source":"file:///home/user/notes.md"}}`
	cases := []struct {
		name, in, want string
	}{
		{"claude pass-through", claudeEnv(plain), "{}\n"},
		{"codex pass-through", `{"session_id":"s","turn_id":"t","cwd":"/","hook_event_name":"PreToolUse","model":"m","permission_mode":"default","tool_name":"mcp__a__b","tool_input":` + plain + `,"tool_use_id":"c"}`, "{}\n"},
		{"vscode pass-through", `{"timestamp":"2026-02-09T10:30:00.000Z","cwd":"/","sessionId":"s","hookEventName":"PreToolUse","tool_name":"x","tool_input":` + plain + `,"tool_use_id":"t"}`, "{}\n"},
		{"cursor pass-through", cursorEnv("preToolUse", plain), `{"permission":"allow"}` + "\n"},
		{"cursor MCP pass-through", cursorEnv("beforeMCPExecution", plain), `{"permission":"allow"}` + "\n"},
		{"cursor MCP data passes", cursorEnv("beforeMCPExecution", `{"attachment":{"source":"data:,x"}}`), `{"permission":"allow"}` + "\n"},
		{"post-tool-use ignored", strings.Replace(claudeEnv(withFile), `"PreToolUse"`, `"PostToolUse"`, 1), "{}\n"},
		{"no event", `{"tool_input":` + withFile + `}`, "{}\n"},
		{"not JSON", `{"hook_event_name":"PreToolUse",`, "{}\n"},
		{"JSON array", `[1,2]`, "{}\n"},
		{"empty", ``, "{}\n"},
		{"tool_input not an object", claudeEnv(`"file:///home/user/notes.md"`), "{}\n"},
		{"tool_input string not JSON", cursorEnv("preToolUse", `"{not json"`), `{"permission":"allow"}` + "\n"},
	}
	for _, c := range cases {
		fsys := newFakeFS()
		out, err := RunHook([]byte(c.in), fsys.open)
		if err != nil || string(out) != c.want || len(fsys.opened) != 0 {
			t.Errorf("%s: got %q %v (opened %v), want %q", c.name, out, err, fsys.opened, c.want)
		}
	}

	// beforeMCPExecution cannot rewrite: a file:// attachment is denied with
	// a pointer to preToolUse, and nothing is read.
	fsys := newFakeFS()
	a, raw := run(t, fsys, cursorEnv("beforeMCPExecution", withFile))
	if a.Permission != "deny" || !strings.Contains(a.AgentMessage, "preToolUse") || len(fsys.opened) != 0 || strings.Contains(raw, "/home") {
		t.Fatalf("beforeMCPExecution: %s", raw)
	}
	// A Cursor build that names the event PreToolUse is still answered in
	// Cursor's shape.
	a, raw = run(t, newFakeFS(), cursorEnv("PreToolUse", withFile))
	if a.Permission != "allow" || a.UpdatedInput == nil {
		t.Fatalf("Cursor PreToolUse: %s", raw)
	}
	if _, err := RunHook([]byte(claudeEnv(withFile)), nil); err == nil {
		t.Fatal("a nil opener must be an error")
	}
}

// TestHookGolden pins the rewritten output, the backward-compatible contract
// hooks already installed on users' machines rely on, for each client.
func TestHookGolden(t *testing.T) {
	skipOnWindows(t)
	cases := []struct{ name, in string }{
		{"claude_code_rewrite", claudeEnv(`{"path":"notes/today.md","overwrite":false,"attachment":{"source":"file:///home/user/notes.md","title":"Today"}}`)},
		{"codex_rewrite", `{"session_id":"s1","turn_id":"t1","transcript_path":null,"cwd":"/home/user","hook_event_name":"PreToolUse","model":"gpt-5","permission_mode":"default","tool_name":"mcp__arrowhead__doc_write","tool_input":{"count":12345678901234567890,"attachments":[{"source":"file:///home/user/data.json"},{"source":"https://example.com/x.md"},{"source":"data:text/plain;base64,aGk="}]},"tool_use_id":"call_1"}`},
		{"vscode_rewrite", `{"timestamp":"2026-02-09T10:30:00.000Z","cwd":"/home/user","sessionId":"s1","hookEventName":"PreToolUse","transcript_path":null,"tool_name":"mcp_arrowhead_doc_write","tool_input":{"attachment":{"source":"file://localhost/home/user/My%20Notes.txt","filename":"renamed.txt"}},"tool_use_id":"t1"}`},
		{"cursor_rewrite", cursorEnv("preToolUse", `{"attachment":{"source":"file:///home/user/notes.md","mime_type":"text/markdown"}}`)},
		{"cursor_rewrite_string_input", cursorEnv("preToolUse", `"{\"attachments\":[{\"source\":\"file:///home/user/blob\"}]}"`)},
		{"claude_code_deny_host", claudeEnv(`{"attachment":{"source":"file://fileserver/share/notes.md"}}`)},
		{"cursor_deny_missing", cursorEnv("preToolUse", `{"attachment":{"source":"file:///home/user/missing.md"}}`)},
		{"cursor_mcp_deny", cursorEnv("beforeMCPExecution", `{"attachment":{"source":"file:///home/user/notes.md"}}`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := RunHook([]byte(c.in), newFakeFS().open)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("hook", c.name+".golden.json"), out)
		})
	}
}

func TestFilePath(t *testing.T) {
	skipOnWindows(t)
	ok := map[string]string{
		"file:///home/user/notes.md":          "/home/user/notes.md",
		"file://localhost/home/user/notes.md": "/home/user/notes.md",
		"FILE://LocalHost/x":                  "/x",
		"file:///a%20b/c%25d.md":              "/a b/c%d.md",
		"file:///a/../etc/hosts":              "/etc/hosts",
		"file:///a//b/":                       "/a/b",
		"file:///%E2%82%AC.txt":               "/€.txt",
		"file:///a+b.md":                      "/a+b.md",
	}
	for in, want := range ok {
		if got, err := FilePath(in); err != nil || got != want {
			t.Errorf("FilePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]error{
		"data:,x":                   ErrFileURLForm,
		"file:/x":                   ErrFileURLForm,
		"file:x":                    ErrFileURLForm,
		"file://":                   ErrFileURLForm,
		"file://localhost":          ErrFileURLForm,
		"file://host/x":             ErrFileURLHost,
		"file://127.0.0.1/x":        ErrFileURLHost,
		"file://localhost.evil/x":   ErrFileURLHost,
		"file:///x?y":               ErrFileURLQuery,
		"file:///x#y":               ErrFileURLQuery,
		"file:///x%":                ErrFileURLEscape,
		"file:///x%0":               ErrFileURLEscape,
		"file:///x%00y":             ErrFileURLNUL,
		"file:///x\x00y":            ErrFileURLNUL,
		"file:///%2e%2e/../x%2F%00": ErrFileURLNUL,
	}
	for in, want := range bad {
		if _, err := FilePath(in); !errors.Is(err, want) {
			t.Errorf("FilePath(%q): got %v, want %v", in, err, want)
		}
	}
}

func TestMimeByExtension(t *testing.T) {
	cases := map[string]string{
		"/a/b.md": "text/markdown", "/a/B.MARKDOWN": "text/markdown", "/x.json": "application/json",
		"/x.txt": "text/plain", "/x.png": "application/octet-stream", "/x": "application/octet-stream",
		"/.md": "application/octet-stream", "/dir.md/file": "application/octet-stream",
	}
	for in, want := range cases {
		if got := MimeByExtension(in); got != want {
			t.Errorf("MimeByExtension(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "doc.md")
	if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenRegular(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(f)
	f.Close()
	if string(data) != "hello" {
		t.Fatalf("read %q", data)
	}
	if _, err := OpenRegular(dir); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("directory: %v", err)
	}
	if _, err := OpenRegular(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	if runtime.GOOS != "windows" {
		if _, err := OpenRegular(os.DevNull); !errors.Is(err, ErrNotRegular) {
			t.Fatalf("device: %v", err)
		}
		link := filepath.Join(dir, "link.md")
		if err := os.Symlink(path, link); err == nil {
			if f, err := OpenRegular(link); err != nil {
				t.Fatalf("symlink to a regular file: %v", err)
			} else {
				f.Close()
			}
		}
	}
}

// TestHookRealFiles runs the hook over the real filesystem end to end.
func TestHookRealFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "weird name #1.md")
	if err := os.WriteFile(path, []byte("# real\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u := (&urlPath{path}).String()
	in := claudeEnv(`{"attachment":{"source":` + quote(u) + `}}`)
	out, err := RunHook([]byte(in), OpenRegular)
	if err != nil {
		t.Fatal(err)
	}
	var a answer
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatal(err)
	}
	d, got := claudeDecisionOf(t, a)
	att, _ := got["attachment"].(map[string]any)
	if d != "allow" || att["source"] != dataURI("text/markdown", "# real\n") || att["filename"] != "weird name #1.md" {
		t.Fatalf("real file: %s", out)
	}
}

// urlPath renders a local path as a file:// URL the way a client would.
type urlPath struct{ path string }

func (u *urlPath) String() string {
	p := filepath.ToSlash(u.path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // Windows: C:/x -> /C:/x
	}
	var b strings.Builder
	b.WriteString("file://")
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '/' || c == '.' || c == '-' || c == '_' || c == ':' || isASCIILetter(c) || '0' <= c && c <= '9' {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(hex2(c)))
	}
	return b.String()
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
