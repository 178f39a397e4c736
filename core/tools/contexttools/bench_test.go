package contexttools_test

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkPackContext packs at the default 8,000-token budget from a
// 20-pin working set and retrieval over 200 documents and 200 source
// files, no vector retrieval.
func BenchmarkPackContext(b *testing.B) {
	docs, repo := map[string]string{}, map[string]string{}
	body := strings.Repeat("Some prose about the billing system and its ledgers.\n", 40)
	for i := range 200 {
		docs[fmt.Sprintf("public/d%03d.md", i)] = body + "Refunds are issued within 14 days.\n" + body
		repo[fmt.Sprintf("src/f%03d.go", i)] = "package src\n\n" + strings.Repeat("// ledger arithmetic\nfunc f() {}\n", 40) + "// refunds path\n"
	}
	e := newEnv(b, nil, docs, repo)
	items := make([]any, 0, 20)
	for i := range 20 {
		items = append(items, pin("repo_file", fmt.Sprintf("src/f%03d.go", i)))
	}
	mustCall(b, e, alice, "workingset_update", map[string]any{"name": "bench", "action": "pin", "items": items})
	args := map[string]any{"query": "refunds", "working_set": "bench", "token_budget": 8000}
	b.ResetTimer()
	for b.Loop() {
		out, _ := mustCall(b, e, alice, "pack_context", args)
		if num(out["tokens_used"]) < 4000 {
			b.Fatalf("the pack is nearly empty: %v tokens", out["tokens_used"])
		}
	}
}
