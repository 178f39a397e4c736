package e2e

import (
	"fmt"
	"os"
	"path/filepath"
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

// TestPackContextVectorRetrievalOverStdio packs with the default embedded
// index filled by doc_index and the default, deterministic embedder: its
// similarity is not meaning, so vector retrieval stays out of the ranking
// and says so, and the ranked retrievers find the document by its terms.
func TestPackContextVectorRetrievalOverStdio(t *testing.T) {
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			c, _ := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "full", "ARROWHEAD_REPO_ROOT": repoTree(t)}, leg.opts...)
			for path, body := range map[string]string{
				"notes/refunds.md":  "# Refund policy\n\nCustomers may return unopened items within thirty days for a full refund.\n",
				"notes/shipping.md": "# Shipping\n\nParcels leave the warehouse every weekday morning.\n",
			} {
				if r := call(t, c, "doc_write", map[string]any{"path": path, "content": body}); r.IsError {
					t.Fatalf("doc_write: %s", text(r))
				}
			}
			if r := call(t, c, "doc_index", map[string]any{"collection": "doc_chunks"}); r.IsError {
				t.Fatalf("doc_index: %s", text(r))
			}
			r := call(t, c, "pack_context", map[string]any{"query": "refund within thirty days"})
			if r.IsError || !strings.Contains(text(r), "thirty days") {
				t.Fatalf("pack_context: %s", text(r))
			}
			sc := r.StructuredContent.(map[string]any)
			var vector map[string]any
			for _, run := range sc["retrieval"].([]any) {
				if m := run.(map[string]any); m["method"] == "vector" {
					vector = m
				}
			}
			if vector == nil || vector["status"] != "not_semantic" || vector["collection"] != "doc_chunks" || !strings.Contains(text(r), "vector not_semantic (0 packed)") {
				t.Fatalf("retrieval: %v", sc["retrieval"])
			}
			found := false
			for _, it := range sc["items"].([]any) {
				m := it.(map[string]any)
				found = found || (m["identifier"] == "notes/refunds.md" && m["retrieval"] == "lexical" && m["reason"] == "retrieved")
			}
			if !found {
				t.Fatalf("no lexical item for the refund document: %v", sc["items"])
			}
		})
	}
}

// TestPackContextAnswersQuestionsOverStdio asks a plain-English question
// over a small tree: the definition that answers it is packed whole with
// its line range, and a budget too small for it cuts it and says so.
func TestPackContextAnswersQuestionsOverStdio(t *testing.T) {
	root := repoTree(t)
	var b strings.Builder
	b.WriteString("package lib\n\n// ParseDuration reads a duration such as 3h or 15m from text.\nfunc ParseDuration(s string) int {\n")
	for i := range 120 {
		fmt.Fprintf(&b, "\t_ = s // step %d of reading the duration\n", i)
	}
	b.WriteString("\treturn 0\n}\n")
	if err := os.WriteFile(filepath.Join(root, "lib", "duration.go"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			c, _ := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_REPO_ROOT": root}, leg.opts...)
			r := call(t, c, "pack_context", map[string]any{"query": "how is a duration parsed from text?"})
			got := text(r)
			if r.IsError || !strings.Contains(got, "[1] lines 3-126: function ParseDuration [found by lexical, symbols]") || strings.Contains(got, canary) {
				t.Fatalf("pack_context: %s", got)
			}
			first := r.StructuredContent.(map[string]any)["items"].([]any)[0].(map[string]any)
			if first["identifier"] != "lib/duration.go" || first["unit"] != "function ParseDuration" || first["cut"] != nil {
				t.Fatalf("first item: %v", first)
			}
			r = call(t, c, "pack_context", map[string]any{"query": "how is a duration parsed from text?", "token_budget": 600})
			sc := r.StructuredContent.(map[string]any)
			first = sc["items"].([]any)[0].(map[string]any)
			if got := text(r); r.IsError || first["cut"] != true || num(sc["tokens_used"]) > 600 || !strings.Contains(got, "was cut at line") || !strings.Contains(got, "Stopped early") {
				t.Fatalf("pack_context under a small budget: %v\n%s", first, got)
			}
		})
	}
}

// TestWorkingSetOwnerIsolationOverHTTP gives two verified subjects the
// same set name: each sees only its own, and another's set is
// indistinguishable from a missing one in every tool that names a set.
func TestWorkingSetOwnerIsolationOverHTTP(t *testing.T) {
	s := startHTTP(t, map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_REPO_ROOT": repoTree(t)})
	alice := s.connect(t, s.token(t, "alice@example.com", "context:read", "context:write"))
	bob := s.connect(t, s.token(t, "bob@example.com", "context:read", "context:write"))
	pinApp := []any{map[string]any{"kind": "repo_file", "identifier": "src/app.py", "note": "alice's note"}}
	if r := call(t, alice, "workingset_update", map[string]any{"name": "bug", "action": "pin", "items": pinApp}); r.IsError {
		t.Fatalf("alice pins: %s", text(r))
	}
	// Each refusal bob gets for alice's set must equal the one for a set
	// nobody has.
	same := func(tool string, args func(name string) map[string]any) {
		t.Helper()
		foreign, missing := call(t, bob, tool, args("bug")), call(t, bob, tool, args("never"))
		if !foreign.IsError || !missing.IsError || text(foreign) != text(missing) {
			t.Fatalf("%s on alice's set: %v %q; on a missing set: %v %q", tool, foreign.IsError, text(foreign), missing.IsError, text(missing))
		}
		if strings.Contains(text(foreign), "alice") || strings.Contains(text(foreign), "src/app.py") {
			t.Fatalf("%s leaks alice's set: %s", tool, text(foreign))
		}
	}
	same("workingset_get", func(n string) map[string]any { return map[string]any{"name": n} })
	same("workingset_update", func(n string) map[string]any {
		return map[string]any{"name": n, "action": "unpin", "items": []any{map[string]any{"kind": "repo_file", "identifier": "src/app.py"}}}
	})
	same("workingset_update", func(n string) map[string]any { return map[string]any{"name": n, "action": "clear"} })
	same("pack_context", func(n string) map[string]any { return map[string]any{"query": "needle", "working_set": n} })

	// bob's own "bug" is a different set; alice's is untouched by all of it.
	if r := call(t, bob, "workingset_update", map[string]any{"name": "bug", "action": "pin",
		"items": []any{map[string]any{"kind": "repo_file", "identifier": "lib/lib.go"}}}); r.IsError {
		t.Fatalf("bob pins: %s", text(r))
	}
	r := call(t, alice, "workingset_get", map[string]any{"name": "bug"})
	if got := text(r); r.IsError || !strings.Contains(got, "src/app.py") || !strings.Contains(got, "alice's note") || strings.Contains(got, "lib/lib.go") {
		t.Fatalf("alice's set after bob: %s", got)
	}
	r = call(t, bob, "workingset_get", map[string]any{"name": "bug"})
	if got := text(r); r.IsError || !strings.Contains(got, "lib/lib.go") || strings.Contains(got, "src/app.py") {
		t.Fatalf("bob's set: %s", got)
	}
	r = call(t, alice, "pack_context", map[string]any{"query": "needle", "working_set": "bug"})
	items := r.StructuredContent.(map[string]any)["items"].([]any)
	if r.IsError || items[0].(map[string]any)["identifier"] != "src/app.py" || items[0].(map[string]any)["reason"] != "pinned" {
		t.Fatalf("alice's pack: %v", items)
	}
}

// num reads a JSON number from structured content.
func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}
