package auth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestProtectedResourceHandler(t *testing.T) {
	servers := []string{"https://issuer.example"}
	h := ProtectedResourceHandler("https://mcp.example", servers)
	servers[0] = "https://changed.example" // the handler keeps its own copy

	tests := []struct {
		method     string
		wantStatus int
		wantBody   bool
	}{
		{http.MethodGet, http.StatusOK, true},
		{http.MethodHead, http.StatusOK, false},
		{http.MethodPost, http.StatusMethodNotAllowed, false},
		{http.MethodOptions, http.StatusMethodNotAllowed, false},
	}
	for _, tc := range tests {
		t.Run(tc.method, func(t *testing.T) {
			req := httptest.NewRequestWithContext(t.Context(), tc.method, MetadataPath, nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantStatus {
				t.Fatalf("status = %d, want %d", rec.Code, tc.wantStatus)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type = %q", ct)
			}
			if tc.wantStatus == http.StatusMethodNotAllowed {
				if allow := rec.Header().Get("Allow"); allow != "GET, HEAD" {
					t.Fatalf("Allow = %q", allow)
				}
				return
			}
			if cc := rec.Header().Get("Cache-Control"); cc != MetadataCacheControl {
				t.Fatalf("Cache-Control = %q", cc)
			}
			if !tc.wantBody {
				if rec.Body.Len() != 0 {
					t.Fatalf("HEAD wrote a body: %q", rec.Body)
				}
				return
			}
			var doc map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{
				"resource":                 "https://mcp.example",
				"authorization_servers":    []any{"https://issuer.example"},
				"bearer_methods_supported": []any{"header"},
			}
			if len(doc) != len(want) {
				t.Fatalf("document has members %v, want exactly %v (no scopes_supported)", doc, want)
			}
			for k, v := range want {
				got, _ := json.Marshal(doc[k])
				exp, _ := json.Marshal(v)
				if string(got) != string(exp) {
					t.Fatalf("%s = %s, want %s", k, got, exp)
				}
			}
			if _, ok := doc["scopes_supported"]; ok {
				t.Fatal("scopes_supported must not be advertised")
			}
		})
	}
}

func TestProtectedResourceHandlerPanics(t *testing.T) {
	tests := []struct {
		name     string
		resource string
		servers  []string
	}{
		{"no resource", "", []string{"https://issuer.example"}},
		{"no servers", "https://mcp.example", nil},
		{"empty server", "https://mcp.example", []string{""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			ProtectedResourceHandler(tc.resource, tc.servers)
		})
	}
}

func TestMetadataURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://mcp.example", "https://mcp.example/.well-known/oauth-protected-resource/mcp"},
		{"https://mcp.example/", "https://mcp.example/.well-known/oauth-protected-resource/mcp"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"},
	}
	for _, tc := range tests {
		if got := MetadataURL(tc.in); got != tc.want {
			t.Errorf("MetadataURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
