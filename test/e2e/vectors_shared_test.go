package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

// TestVectorIndexSharedByTwoStdioServers: two stdio servers on one data
// directory (one per MCP client, say) serve one embedded vector index. A
// document indexed through one is found by the other's next query, both
// ways, with the calls interleaved. The coding profile serves the data
// family without the tasks family, whose store is not shared yet.
func TestVectorIndexSharedByTwoStdioServers(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "documents")
	if err := os.MkdirAll(filepath.Join(docs, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(docs, "notes", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"ARROWHEAD_PROFILE": "coding"}
	a, _ := startStdioIn(t, dir, env)
	b, _ := startStdioIn(t, dir, env)
	finds := func(who string, c *client.Client, tool, query, want string) {
		t.Helper()
		r := call(t, c, tool, map[string]any{"collection": "doc_chunks", "query": query, "k": 1})
		body, _ := json.Marshal(r.StructuredContent)
		if r.IsError || !strings.Contains(string(body), want) {
			t.Fatalf("%s %s(%q) did not find %s: %s %s", who, tool, query, want, text(r), body)
		}
	}
	// b loads the (empty) collection before a writes to it.
	if r := call(t, b, "vector_query", map[string]any{"collection": "doc_chunks", "query": "anything"}); r.IsError {
		t.Fatalf("vector_query on the empty index: %s", text(r))
	}
	write("refunds.md", "# Refund policy\n\nCustomers may return unopened items within thirty days for a full refund.\n")
	if r := call(t, a, "doc_index", map[string]any{"collection": "doc_chunks"}); r.IsError {
		t.Fatalf("doc_index through a: %s", text(r))
	}
	finds("b", b, "vector_query", "refund within thirty days", "notes/refunds.md")
	write("shipping.md", "# Shipping\n\nParcels leave the warehouse every weekday morning.\n")
	if r := call(t, b, "doc_index", map[string]any{"collection": "doc_chunks"}); r.IsError {
		t.Fatalf("doc_index through b: %s", text(r))
	}
	finds("a", a, "hybrid_query", "parcels warehouse weekday", "notes/shipping.md")
	finds("a", a, "vector_query", "refund within thirty days", "notes/refunds.md")
}
