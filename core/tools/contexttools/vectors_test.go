package contexttools_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

// aliceIndexing is alice with the scope doc_index needs.
var aliceIndexing = ports.NewPrincipal("alice", "vector:write")

// vectorVars make chunks a few lines long, so a hit's lines say where in
// its document it is.
var vectorVars = map[string]string{"ARROWHEAD_VECTOR_INDEX_CHUNK_MAX_CHARS": "200", "ARROWHEAD_VECTOR_INDEX_CHUNK_OVERLAP": "20"}

// vectorQuery shares character trigrams with one paragraph of the
// handbook ("money", "window") but no term, so the lexical ranker finds
// nothing and only vector retrieval does.
const vectorQuery = "windowsill moneybox"

func vectorDocs() map[string]string {
	var hb strings.Builder
	hb.WriteString("# Handbook\n\n")
	for i := range 12 {
		hb.WriteString("Section about shipping crates and pallets, part " + string(rune('a'+i)) + ".\n")
	}
	hb.WriteString("\nCustomers may ask for their money back within the refund window.\nThe window is fourteen days.\n\n")
	for i := range 12 {
		hb.WriteString("Section about warehouse inventory counts, part " + string(rune('a'+i)) + ".\n")
	}
	return map[string]string{
		"public/handbook.md": hb.String(),
		"public/leaky.txt":   "the money back key is AKIAIOSFODNN7EXAMPLE for now\n",
		"public/prices.json": "{\n  \"refunds\": \"money back within the window\",\n  \"currency\": \"EUR\"\n}\n",
		"private/secret.md":  "Money back window secrets live here.\n",
	}
}

// lineRange is lines [start, end] of a file, as the manifest names them.
func lineRange(t *testing.T, path string, start, end int) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if start < 1 || end > len(lines) || start > end {
		t.Fatalf("lines %d-%d of a %d-line file", start, end, len(lines))
	}
	return strings.Join(lines[start-1:end], "")
}

func retrievalOf(t *testing.T, out map[string]any, method string) map[string]any {
	t.Helper()
	for _, r := range out["retrieval"].([]any) {
		if m := r.(map[string]any); m["method"] == method {
			return m
		}
	}
	t.Fatalf("no %s retrieval in %v", method, out["retrieval"])
	return nil
}

func vectorItems(out map[string]any) []map[string]any {
	var got []map[string]any
	for _, it := range out["items"].([]any) {
		if m := it.(map[string]any); slices.Contains(asList(m["retrievers"]), any("vector")) {
			got = append(got, m)
		}
	}
	return got
}

func TestPackVectorRetrieval(t *testing.T) {
	e := buildEnv(t, vectorVars, vectorDocs(), fixtureRepo, semanticVectors)
	idx, _ := mustCall(t, e, aliceIndexing, "doc_index", map[string]any{"collection": "doc_chunks"})
	if num(idx["documents_indexed"]) != 3 { // private/ is not readable, so not indexed
		t.Fatalf("doc_index: %v", idx)
	}
	out, text := mustCall(t, e, alice, "pack_context", map[string]any{"query": vectorQuery})
	if lex := retrievalOf(t, out, "lexical"); lex["status"] != "ran" || num(lex["packed"]) != 0 {
		t.Fatalf("lexical retrieval: %v", lex)
	}
	vec := retrievalOf(t, out, "vector")
	if vec["status"] != "ran" || vec["collection"] != "doc_chunks" || vec["semantic"] != true {
		t.Fatalf("vector retrieval: %v", vec)
	}
	items := vectorItems(out)
	if len(items) == 0 || num(vec["packed"]) != len(items) {
		t.Fatalf("vector items %v, packed %v", items, vec["packed"])
	}
	seen := map[string]bool{}
	for _, it := range items {
		id := it["identifier"].(string)
		if it["reason"] != "retrieved" || it["kind"] != "doc" {
			t.Fatalf("vector item: %v", it)
		}
		// The manifest reproduces: the named lines of the named file hash
		// to the digest.
		body := lineRange(t, filepath.Join(e.docs, filepath.FromSlash(id)), num(it["start_line"]), num(it["end_line"]))
		if sum := sha256.Sum256([]byte(body)); hex.EncodeToString(sum[:]) != it["sha256"] {
			t.Fatalf("%s lines %v-%v do not hash to the manifest's digest", id, it["start_line"], it["end_line"])
		}
		seen[id] = true
	}
	// The handbook paragraph is placed on its own lines rather than the
	// whole document.
	placed := false
	for _, it := range items {
		if it["identifier"] != "public/handbook.md" {
			continue
		}
		start, end := num(it["start_line"]), num(it["end_line"])
		body := lineRange(t, filepath.Join(e.docs, "public", "handbook.md"), start, end)
		placed = placed || (strings.Contains(body, "money back") && end-start <= 8)
	}
	if !placed {
		t.Fatalf("no vector item places the handbook paragraph: %v", items)
	}
	// A JSON document's sanitized form is re-serialized: its hit packs the
	// whole document.
	for _, it := range items {
		if it["identifier"] == "public/prices.json" && (num(it["start_line"]) != 1 || num(it["end_line"]) != 4) {
			t.Fatalf("JSON hit: %v", it)
		}
	}
	if !seen["public/leaky.txt"] || strings.Contains(text, "AKIAIOSFODNN7EXAMPLE") {
		t.Fatalf("the leaky file was not packed redacted (seen %v):\n%s", seen, text)
	}
	if n := strings.Count(text, "UNTRUSTED-DATA-BEGIN"); n != len(out["items"].([]any)) {
		t.Fatalf("%d frames for %d items", n, len(out["items"].([]any)))
	}
}

// Vector hits are deduplicated against pins and literal hits, re-read
// under the read grant (an index entry from an earlier grant packs
// nothing), and passed over when the document changed since it was
// indexed; a caller without the collection grant gets no vector retrieval.
func TestPackVectorRules(t *testing.T) {
	e := buildEnv(t, vectorVars, vectorDocs(), fixtureRepo, semanticVectors)
	mustCall(t, e, aliceIndexing, "doc_index", map[string]any{"collection": "doc_chunks"})

	// A pinned document is packed once, as the pin.
	mustCall(t, e, alice, "workingset_update", map[string]any{"name": "hb", "action": "pin", "items": []any{pin("doc", "public/handbook.md")}})
	out, _ := mustCall(t, e, alice, "pack_context", map[string]any{"query": vectorQuery, "working_set": "hb"})
	for _, it := range vectorItems(out) {
		if it["identifier"] == "public/handbook.md" {
			t.Fatalf("a pinned document came back from vector retrieval: %v", it)
		}
	}
	// A lexical hit's unit is not packed again by a vector hit over it:
	// the vector retriever is added to the unit's retrievers instead.
	out, _ = mustCall(t, e, alice, "pack_context", map[string]any{"query": "money back"})
	spans := map[string][][2]int{}
	for _, raw := range out["items"].([]any) {
		it := raw.(map[string]any)
		id, s, end := it["identifier"].(string), num(it["start_line"]), num(it["end_line"])
		for _, sp := range spans[id] {
			if s <= sp[1] && sp[0] <= end {
				t.Fatalf("%s lines %d-%d packed twice", id, s, end)
			}
		}
		spans[id] = append(spans[id], [2]int{s, end})
	}

	// An index entry for a document alice may no longer read.
	vecs, err := e.embedder.Embed(t.Context(), []string{vectorQuery})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.index.Upsert(t.Context(), "doc_chunks", []ports.Chunk{{ID: "revoked", Tenant: "alice", Source: "private/secret.md",
		Content: "Money back window secrets live here.\n", Hash: "x", Embedding: vecs[0]}}); err != nil {
		t.Fatal(err)
	}
	out, text := mustCall(t, e, alice, "pack_context", map[string]any{"query": vectorQuery})
	for _, it := range out["items"].([]any) {
		if it.(map[string]any)["identifier"] == "private/secret.md" {
			t.Fatalf("a denied document was packed: %v", it)
		}
	}
	if strings.Contains(text, "secrets live here") {
		t.Fatal("denied content reached the pack")
	}

	// The handbook changes after indexing: its chunks are stale.
	if err := os.WriteFile(filepath.Join(e.docs, "public", "handbook.md"), []byte("# Handbook\n\nRewritten entirely.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ = mustCall(t, e, alice, "pack_context", map[string]any{"query": vectorQuery})
	for _, it := range vectorItems(out) {
		if it["identifier"] == "public/handbook.md" {
			t.Fatalf("a stale chunk was packed: %v", it)
		}
	}

	// bob may not query the collection.
	out, _ = mustCall(t, e, bob, "pack_context", map[string]any{"query": vectorQuery})
	if vec := retrievalOf(t, out, "vector"); vec["status"] != "denied" || len(vectorItems(out)) != 0 {
		t.Fatalf("bob's vector retrieval: %v", vec)
	}

	// With the budget spent on the pin, vector retrieval does not run.
	out, _ = mustCall(t, e, alice, "pack_context", map[string]any{"query": vectorQuery, "working_set": "hb", "token_budget": 60})
	if vec := retrievalOf(t, out, "vector"); len(out["items"].([]any)) > 0 && vec["status"] != "budget_spent" && vec["status"] != "ran" {
		t.Fatalf("vector retrieval after the budget: %v", vec)
	}
}

func TestPackWithoutVectorIndex(t *testing.T) {
	e := newEnv(t, nil, fixtureDocs, fixtureRepo)
	out, text := mustCall(t, e, alice, "pack_context", map[string]any{"query": "refunds"})
	if !strings.Contains(text, "vector not_configured (0 packed)") {
		t.Fatalf("the text does not say which retrieval ran:\n%s", text)
	}
	if vec := retrievalOf(t, out, "vector"); vec["status"] != "not_configured" || num(vec["packed"]) != 0 {
		t.Fatalf("vector retrieval without an index: %v", vec)
	}
	if lex := retrievalOf(t, out, "lexical"); lex["status"] != "ran" || num(lex["packed"]) == 0 {
		t.Fatalf("lexical retrieval: %v", lex)
	}
}

// With the deterministic embedder, whose similarity is not meaning,
// vector retrieval stays out of the ranking and the result says why.
func TestPackVectorNotSemantic(t *testing.T) {
	e := buildEnv(t, vectorVars, vectorDocs(), fixtureRepo, deterministicVectors)
	mustCall(t, e, aliceIndexing, "doc_index", map[string]any{"collection": "doc_chunks"})
	out, text := mustCall(t, e, alice, "pack_context", map[string]any{"query": vectorQuery})
	if vec := retrievalOf(t, out, "vector"); vec["status"] != "not_semantic" || vec["semantic"] != false || len(vectorItems(out)) != 0 {
		t.Fatalf("vector retrieval with a non-semantic embedder: %v", vec)
	}
	if !strings.Contains(text, "vector not_semantic (0 packed)") {
		t.Fatalf("the text does not say vector retrieval stayed out:\n%s", text)
	}
}

// asList is a JSON array from structured output; nil for an absent one.
func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
