package attach

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/catalog"
)

// canary is planted in every hostile input; no message may repeat it.
const canary = "s3cr3tcanary"

func TestClassify(t *testing.T) {
	cases := map[string]Scheme{
		"data:,x":                SchemeData,
		"DATA:text/plain,x":      SchemeData,
		"http://example.com/":    SchemeURL,
		"HTTPS://example.com/":   SchemeURL,
		"file:///etc/hosts":      SchemeFile,
		"FILE://localhost/x":     SchemeFile,
		"file:relative":          SchemeFile,
		"ftp://example.com/":     SchemeUnsupported,
		"mailto:a@example.com":   SchemeUnsupported,
		"":                       SchemeUnsupported,
		":nothing":               SchemeUnsupported,
		" file:///x":             SchemeUnsupported,
		"/etc/hosts":             SchemeUnsupported,
		`C:\dir\file.md`:         SchemeUnsupported,
		"1file:///x":             SchemeUnsupported,
		"fi le:///x":             SchemeUnsupported,
		"file+x:///x":            SchemeUnsupported,
		"data":                   SchemeUnsupported,
		"https:" + canary:        SchemeURL,
		"javascript:alert(1)":    SchemeUnsupported,
		"file\u0130:///x":        SchemeUnsupported,
		"da\x00ta:,x":            SchemeUnsupported,
		"blob:https://a.example": SchemeUnsupported,
	}
	for in, want := range cases {
		if got := Classify(in); got != want {
			t.Errorf("Classify(%q) = %s, want %s", in, got, want)
		}
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestDecodeData(t *testing.T) {
	ok := []struct {
		name, in, data, mime string
	}{
		{"std padded", "data:text/markdown;base64," + b64("# hi\n"), "# hi\n", "text/markdown"},
		{"std unpadded", "data:text/plain;base64," + strings.TrimRight(b64("ab"), "="), "ab", "text/plain"},
		{"url-safe", "data:application/json;base64," + base64.URLEncoding.EncodeToString([]byte{0xfb, 0xff, 0xfe}), "\xfb\xff\xfe", "application/json"},
		{"url-safe unpadded", "data:application/json;base64," + base64.RawURLEncoding.EncodeToString([]byte{0xfb, 0xff}), "\xfb\xff", "application/json"},
		{"charset", "data:text/plain;charset=UTF-8;base64," + b64("x"), "x", "text/plain"},
		{"uppercase markers", "DATA:Text/Markdown;BASE64," + b64("x"), "x", "text/markdown"},
		{"percent", "data:text/plain,Hello%2C%20World", "Hello, World", "text/plain"},
		{"percent keeps plus", "data:text/plain,a+b", "a+b", "text/plain"},
		{"default type", "data:,plain", "plain", "text/plain"},
		{"params only", "data:;charset=us-ascii,x", "x", "text/plain"},
		{"empty base64", "data:text/plain;base64,", "", "text/plain"},
		{"unicode percent payload", "data:text/plain,h%C3%A9", "hé", "text/plain"},
	}
	for _, c := range ok {
		data, mt, err := DecodeData(c.in, 64)
		if err != nil || string(data) != c.data || mt != c.mime {
			t.Errorf("%s: got %q %q %v", c.name, data, mt, err)
		}
	}

	bad := []struct {
		name, in string
		want     error
	}{
		{"not data", "https://" + canary, ErrNotDataURI},
		{"no comma", "data:text/plain;base64" + canary, ErrMalformedData},
		{"bad type", "data:" + canary + ";base64," + b64("x"), ErrBadMediaType},
		{"type without subtype", "data:text/;base64," + b64("x"), ErrBadMediaType},
		{"two slashes", "data:a/b/c;base64," + b64("x"), ErrBadMediaType},
		{"latin1", "data:text/plain;charset=latin1;base64," + b64("x"), ErrBadCharset},
		{"mixed alphabets", "data:text/plain;base64,ab+_", ErrBadBase64},
		{"bad char", "data:text/plain;base64,ab*" + canary, ErrBadBase64},
		{"newline", "data:text/plain;base64,YWJj\nZGVm", ErrBadBase64},
		{"three pads", "data:text/plain;base64,YQ===", ErrBadBase64},
		{"pad mid-length", "data:text/plain;base64,YWJ=", ErrBadBase64},
		{"non-canonical bits", "data:text/plain;base64,YR==", ErrBadBase64},
		{"lone char", "data:text/plain;base64,Y", ErrBadBase64},
		{"bad percent", "data:text/plain,%zz" + canary, ErrBadPercent},
		{"huge header", "data:text/" + strings.Repeat("a", 500) + "," + canary, ErrBadMediaType},
	}
	for _, c := range bad {
		_, _, err := DecodeData(c.in, 64)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), canary) {
			t.Errorf("%s: error echoes the input", c.name)
		}
	}
}

func TestDecodeDataSizeCap(t *testing.T) {
	const limit = 8
	// Exactly at the limit passes.
	if data, _, err := DecodeData("data:text/plain;base64,"+b64("12345678"), limit); err != nil || len(data) != limit {
		t.Fatalf("at the limit: %q %v", data, err)
	}
	// The cap is checked from the encoded length before any decoding: a
	// payload that is both oversized and invalid reports the size.
	_, _, err := DecodeData("data:text/plain;base64,"+strings.Repeat("*", 64), limit)
	if !errors.Is(err, ErrAttachmentLarge) {
		t.Fatalf("oversized invalid base64: %v", err)
	}
	_, _, err = DecodeData("data:text/plain,"+strings.Repeat("%zz", 12), limit)
	if !errors.Is(err, ErrAttachmentLarge) {
		t.Fatalf("oversized invalid percent payload: %v", err)
	}
	if !strings.Contains(err.Error(), "8 bytes") {
		t.Fatalf("the refusal names the limit: %v", err)
	}
	// One byte over, in each encoding.
	if _, _, err := DecodeData("data:text/plain;base64,"+b64("123456789"), limit); !errors.Is(err, ErrAttachmentLarge) {
		t.Fatalf("base64 over: %v", err)
	}
	if _, _, err := DecodeData("data:text/plain;base64,"+strings.TrimRight(b64("123456789"), "="), limit); !errors.Is(err, ErrAttachmentLarge) {
		t.Fatalf("unpadded base64 over: %v", err)
	}
	// Percent: passes the encoded-length estimate, caught after decoding.
	if _, _, err := DecodeData("data:text/plain,123456789", limit); !errors.Is(err, ErrAttachmentLarge) {
		t.Fatalf("percent over: %v", err)
	}
	if _, _, err := DecodeData("data:text/plain,12345678", limit); err != nil {
		t.Fatalf("percent at the limit: %v", err)
	}
}

func TestDocumentType(t *testing.T) {
	all := []string{".json", ".md", ".txt"}
	cases := []struct {
		mime, filename string
		allowed        []string
		want           string // "" means refused
	}{
		{"text/markdown", "", all, ".md"},
		{"text/x-markdown", "notes", all, ".md"},
		{"TEXT/MARKDOWN; charset=utf-8", "", all, ".md"},
		{"text/markdown", "notes.markdown", []string{".md", ".markdown"}, ".markdown"},
		{"text/markdown", "", []string{".markdown"}, ".markdown"},
		{"text/markdown", "notes.txt", all, ".md"},
		{"application/json", "data.md", all, ".json"},
		{"text/plain", "", all, ".txt"},
		{"text/plain", "README.MD", all, ".md"},
		{"text/plain", "dir/report.json", all, ".json"},
		{"text/plain", "a.exe", all, ".txt"},
		{"", "notes.md", all, ".md"},
		{"application/octet-stream", "notes.txt", all, ".txt"},
		{"application/octet-stream", "image.png", all, ""},
		{"application/octet-stream", "", all, ""},
		{"", "", all, ""},
		{"image/png", "notes.md", all, ""},
		{"text/html", "page.md", all, ""},
		{"application/json", "", []string{".md", ".txt"}, ""},
		{"text/plain", "notes.md", []string{".txt"}, ""},
		{"text/markdown", "", []string{".MD"}, ".md"},
	}
	for _, c := range cases {
		got, err := DocumentType(c.mime, c.filename, c.allowed)
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("DocumentType(%q, %q, %v) = %q, %v; want %q", c.mime, c.filename, c.allowed, got, err, c.want)
		}
		if err != nil && !errors.Is(err, ErrNotDocument) {
			t.Errorf("DocumentType(%q, %q): error %v is not ErrNotDocument", c.mime, c.filename, err)
		}
	}
	_, err := DocumentType("image/"+canary, canary+".exe", all)
	if err == nil || strings.Contains(err.Error(), canary) || !strings.Contains(err.Error(), ".json, .md, .txt") {
		t.Fatalf("refusal must name the allowed types and nothing of the input: %v", err)
	}
}

func toolError(t *testing.T, err error) *catalog.ToolError {
	t.Helper()
	te, ok := catalog.AsToolError(err)
	if !ok {
		t.Fatalf("want a ToolError, got %T %v", err, err)
	}
	if strings.Contains(te.Message, canary) {
		t.Fatalf("message echoes caller input: %s", te.Message)
	}
	for k, v := range te.Data {
		if s, ok := v.(string); ok && strings.Contains(s, canary) {
			t.Fatalf("data %s echoes caller input", k)
		}
	}
	return te
}

func TestResolve(t *testing.T) {
	allowed := []string{".json", ".md", ".txt"}
	got, err := Resolve(Attachment{Source: "data:text/markdown;base64," + b64("# Title\n"), Filename: "t.md"}, allowed, 100)
	if err != nil || string(got.Data) != "# Title\n" || got.Ext != ".md" || got.Mime != "text/markdown" {
		t.Fatalf("data: got %+v %v", got, err)
	}
	// mime_type overrides the URI's type; the filename breaks the tie.
	got, err = Resolve(Attachment{Source: "data:application/octet-stream;base64," + b64("{}"), MimeType: "Application/JSON"}, allowed, 100)
	if err != nil || got.Ext != ".json" || got.Mime != "application/json" {
		t.Fatalf("mime_type hint: got %+v %v", got, err)
	}
	got, err = Resolve(Attachment{Source: "data:application/octet-stream;base64," + b64("x"), Filename: "n.txt"}, allowed, 100)
	if err != nil || got.Ext != ".txt" {
		t.Fatalf("filename hint: got %+v %v", got, err)
	}

	refusals := []struct {
		name string
		att  Attachment
		want string
	}{
		{"url", Attachment{Source: "https://" + canary + ".example/doc.md"}, "doc_retrieve"},
		{"unsupported", Attachment{Source: "ftp://" + canary}, "data: URI"},
		{"bare path", Attachment{Source: "/home/" + canary + "/x.md"}, "data: URI"},
		{"file in filename", Attachment{Source: "data:,x", Filename: "file:///" + canary}, "file://"},
		{"file in mime", Attachment{Source: "data:,x", MimeType: "FILE:" + canary}, "file://"},
		{"too large", Attachment{Source: "data:text/plain;base64," + b64(strings.Repeat("x", 101))}, "100 bytes"},
		{"malformed", Attachment{Source: "data:text/plain;base64," + canary + "*"}, "base64"},
		{"not a document", Attachment{Source: "data:image/png;base64," + b64("x"), Filename: canary + ".png"}, "allowed: .json, .md, .txt"},
		{"bad mime hint", Attachment{Source: "data:,x", MimeType: canary}, "media type"},
		{"latin1 mime hint", Attachment{Source: "data:,x", MimeType: "text/plain; charset=latin1"}, "charset"},
	}
	for _, c := range refusals {
		_, err := Resolve(c.att, allowed, 100)
		te := toolError(t, err)
		if te.Kind != catalog.KindValidation || !strings.Contains(te.Message, c.want) {
			t.Errorf("%s: got %s %q, want a validation refusal mentioning %q", c.name, te.Kind, te.Message, c.want)
		}
	}

	_, err = Resolve(Attachment{Source: "file:///home/" + canary + "/notes.md"}, allowed, 100)
	te := toolError(t, err)
	if !strings.Contains(te.Message, MissingHookError) || te.Data["min_version"] != HookProtocolVersion {
		t.Fatalf("file: want the install-or-upgrade payload, got %+v", te)
	}

	if _, err := Resolve(Attachment{Source: "data:,x"}, allowed, 0); err == nil {
		t.Fatal("a non-positive limit is a wiring error")
	} else if _, ok := catalog.AsToolError(err); ok {
		t.Fatal("a wiring error must not reach the caller as a ToolError")
	}
}

func TestAttachmentSchema(t *testing.T) {
	const limit = 1000
	s, err := catalog.SchemaFor[Attachment](Bounds(limit))
	if err != nil {
		t.Fatal(err)
	}
	full := "data:text/markdown;charset=utf-8;base64," + b64(strings.Repeat("x", limit))
	cases := []struct {
		name string
		v    any
		ok   bool
	}{
		{"full-size data URI", map[string]any{"source": full, "filename": "a.md", "mime_type": "text/markdown"}, true},
		{"source only", map[string]any{"source": "data:,x"}, true},
		{"missing source", map[string]any{"filename": "a.md"}, false},
		{"empty source", map[string]any{"source": ""}, false},
		{"too long", map[string]any{"source": "data:,x" + strings.Repeat("x", DataURIMaxLength(limit))}, false},
		{"unknown key", map[string]any{"source": "data:,x", "title": "t"}, false},
		{"long filename", map[string]any{"source": "data:,x", "filename": strings.Repeat("a", MaxFilenameLength+1)}, false},
	}
	for _, c := range cases {
		err := s.Validate(c.v)
		if (err == nil) != c.ok {
			t.Errorf("%s: got %v", c.name, err)
		}
	}
	if DataURIMaxLength(limit) < len(full) {
		t.Fatalf("maxLength %d cannot hold a full-size URI of %d", DataURIMaxLength(limit), len(full))
	}
}

func TestClientSetups(t *testing.T) {
	for _, c := range Clients() {
		s, ok := Setup(c)
		if !ok || s.Name == "" || s.ConfigFile == "" || s.Requires == "" {
			t.Fatalf("%s: incomplete setup %+v", c, s)
		}
		if !strings.Contains(s.Snippet, `"`+HookCommandLine()+`"`) || !strings.Contains(s.Snippet, "--protocol=1") {
			t.Errorf("%s: the block must register %q with its protocol stamp", c, HookCommandLine())
		}
		switch s.Format {
		case "json":
			var v map[string]any
			if err := json.Unmarshal([]byte(s.Snippet), &v); err != nil {
				t.Errorf("%s: snippet is not JSON: %v", c, err)
			}
		case "toml":
			if !strings.Contains(s.Snippet, "# arrowhead attachment hook, protocol=1") ||
				!strings.Contains(s.Snippet, "[[hooks.PreToolUse.hooks]]") {
				t.Errorf("%s: TOML block lacks its stamp or table", c)
			}
		default:
			t.Errorf("%s: unknown format %q", c, s.Format)
		}
	}
	if _, ok := Setup("emacs"); ok {
		t.Fatal("unknown client accepted")
	}
	for in, want := range map[string]Client{"claude-code": ClientClaudeCode, "Claude_Code": ClientClaudeCode, " vscode ": ClientVSCode, "codex": ClientCodex, "cursor": ClientCursor} {
		if got, ok := ParseClient(in); !ok || got != want {
			t.Errorf("ParseClient(%q) = %q, %v", in, got, ok)
		}
	}
	if _, ok := ParseClient("vim"); ok {
		t.Fatal("ParseClient accepted an unknown client")
	}
}

func TestMissingHookPayload(t *testing.T) {
	te := MissingHookPayload(PayloadOptions{})
	if te.Kind != catalog.KindValidation {
		t.Fatalf("kind %s", te.Kind)
	}
	var msg struct {
		Error       string                 `json:"error"`
		HookCommand string                 `json:"hook_command"`
		MinVersion  int                    `json:"min_version"`
		SetupByHost map[Client]ClientSetup `json:"setup_by_host"`
		AskUser     string                 `json:"ask_user"`
		DocsURL     string                 `json:"docs_url"`
		Summary     string                 `json:"summary"`
	}
	if err := json.Unmarshal([]byte(te.Message), &msg); err != nil {
		t.Fatalf("message is not JSON: %v", err)
	}
	if msg.Error != MissingHookError || msg.HookCommand != HookCommandLine() ||
		!strings.HasPrefix(msg.HookCommand, "arrowhead hook attachments") ||
		msg.MinVersion != HookProtocolVersion || msg.AskUser == "" || msg.DocsURL != DefaultDocsURL ||
		!strings.Contains(msg.Summary, "Install or upgrade") || !strings.Contains(msg.Summary, "doc_write") {
		t.Fatalf("message fields: %+v", msg)
	}
	if len(msg.SetupByHost) != 4 {
		t.Fatalf("setup_by_host has %d clients", len(msg.SetupByHost))
	}
	for _, c := range Clients() {
		want, _ := Setup(c)
		if msg.SetupByHost[c] != want {
			t.Errorf("%s: the payload's block differs from Setup's", c)
		}
	}
	// Data stays lean: three fields, none repeating a registration block.
	if len(te.Data) != 3 || te.Data["hook_command"] != HookCommandLine() ||
		te.Data["min_version"] != HookProtocolVersion || te.Data["docs_url"] != DefaultDocsURL {
		t.Fatalf("data: %v", te.Data)
	}
	extra, _ := json.Marshal(te.Data)
	if strings.Contains(string(extra), "hooks") || len(extra) > 256 {
		t.Fatalf("data repeats the message: %s", extra)
	}

	custom := MissingHookPayload(PayloadOptions{ToolName: "doc_attach", DocsURL: "https://docs.example/hook"})
	if custom.Data["docs_url"] != "https://docs.example/hook" || !strings.Contains(custom.Message, "doc_attach") {
		t.Fatalf("options ignored: %+v", custom)
	}
	golden(t, "missing_hook_payload.golden.json", []byte(te.Message+"\n"))
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden file %s (run go test -update): %v", path, err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from its golden file (run go test -update after a deliberate change)\ngot:  %s\nwant: %s", name, got, want)
	}
}
