package e2e

import (
	"strings"
	"testing"
)

func TestContextToolsOverStdio(t *testing.T) {
	root := repoTree(t)
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			c, _ := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_REPO_ROOT": root}, leg.opts...)
			r := call(t, c, "workingset_update", map[string]any{"name": "bug", "action": "pin",
				"items": []any{map[string]any{"kind": "repo_file", "identifier": "src/app.py", "note": "entry"}}})
			if r.IsError {
				t.Fatalf("pin: %s", text(r))
			}
			for _, p := range []string{".git/config", "node_modules/m/i.js", "bin/blob.go", "../../etc/passwd"} {
				r = call(t, c, "workingset_update", map[string]any{"name": "bug", "action": "pin",
					"items": []any{map[string]any{"kind": "repo_file", "identifier": p}}})
				if got := text(r); !r.IsError || strings.Contains(got, canary) || strings.Contains(got, p) {
					t.Fatalf("pin %q: %s", p, got)
				}
			}
			r = call(t, c, "workingset_get", map[string]any{"name": "bug"})
			if got := text(r); r.IsError || !strings.Contains(got, "src/app.py") || strings.Contains(got, ".git") {
				t.Fatalf("workingset_get: %s", got)
			}
			r = call(t, c, "pack_context", map[string]any{"query": "needle", "working_set": "bug", "token_budget": 2000})
			got := text(r)
			if r.IsError || strings.Contains(got, canary) || !strings.Contains(got, "class App:") {
				t.Fatalf("pack_context: %s", got)
			}
			sc, ok := r.StructuredContent.(map[string]any)
			if !ok || sc["tokenizer"] != "cl100k_base" {
				t.Fatalf("pack_context structured: %#v", r.StructuredContent)
			}
			items := sc["items"].([]any)
			if len(items) < 2 || items[0].(map[string]any)["reason"] != "pinned" || items[0].(map[string]any)["identifier"] != "src/app.py" {
				t.Fatalf("pack manifest: %v", items)
			}
		})
	}
}
