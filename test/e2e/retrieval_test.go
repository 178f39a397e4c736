package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRetrievalOutOfTheBoxOverStdio is a newcomer's first retrieval: no DSN
// and no settings, doc_index into the default embedded collection, then
// vector_query and hybrid_query find the document.
func TestRetrievalOutOfTheBoxOverStdio(t *testing.T) {
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			c, _ := startStdio(t, nil, leg.opts...)
			if r := call(t, c, "doc_write", map[string]any{"path": "notes/refunds.md",
				"content": "# Refund policy\n\nCustomers may return unopened items within thirty days for a full refund.\n"}); r.IsError {
				t.Fatalf("doc_write: %s", text(r))
			}
			if r := call(t, c, "doc_write", map[string]any{"path": "notes/shipping.md",
				"content": "# Shipping\n\nParcels leave the warehouse every weekday morning.\n"}); r.IsError {
				t.Fatalf("doc_write: %s", text(r))
			}
			r := call(t, c, "doc_index", map[string]any{"collection": "doc_chunks"})
			if r.IsError {
				t.Fatalf("doc_index: %s", text(r))
			}
			for _, tool := range []string{"vector_query", "hybrid_query"} {
				r = call(t, c, tool, map[string]any{"collection": "doc_chunks", "query": "refund within thirty days", "k": 1})
				if r.IsError {
					t.Fatalf("%s: %s", tool, text(r))
				}
				body, _ := json.Marshal(r.StructuredContent)
				if !strings.Contains(string(body), "notes/refunds.md") {
					t.Fatalf("%s did not find the refund document: %s", tool, body)
				}
			}
			if r := call(t, c, "vector_query", map[string]any{"collection": "other", "query": "x"}); !r.IsError {
				t.Fatal("a collection other than the default was served")
			}
		})
	}
}
