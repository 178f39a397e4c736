// Command docs_rag is the offline retrieval walkthrough: it indexes the
// sample corpus into the embedded vector index and answers queries with
// cited chunks, through the same guarded App a client reaches over MCP.
// No server, no database, no network:
//
//	go run ./examples/docs_rag
//	go run ./examples/docs_rag "how long do refunds take?"
//
// The deterministic embedder is not semantic (it hashes words and
// character trigrams), so the ranking shows the shape of the loop, not
// retrieval quality; hybrid_query's keyword side (BM25) carries most of the
// relevance here. For the Postgres walkthrough see README.md beside this
// file.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "docs_rag:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, queries []string) error {
	if len(queries) == 0 {
		queries = []string{"how long do refunds take?", "express delivery"}
	}
	_, self, _, _ := runtime.Caller(0)
	corpus := filepath.Join(filepath.Dir(self), "corpus")
	data, err := os.MkdirTemp("", "arrowhead-docs-rag-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)

	env := map[string]string{
		"ARROWHEAD_PROFILE":              "docs",
		"ARROWHEAD_DOCS_ROOT":            corpus,
		"ARROWHEAD_JAIL_ROOT":            corpus,
		"ARROWHEAD_DATA_DIR":             data,
		"ARROWHEAD_PGVECTOR_COLLECTIONS": "doc_chunks",
		"ARROWHEAD_EMBEDDING_DIMENSIONS": "384",
	}
	s, err := settings.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return err
	}
	rt, err := wire.Build(ctx, s, wire.Options{})
	if err != nil {
		return err
	}
	defer rt.Close(ctx)

	// Auth is off in this walkthrough, so the local operator is the caller
	// and its subject is the tenant.
	who := ports.Operator()
	res, err := rt.App.Call(ctx, who, "doc_index", map[string]any{"collection": "doc_chunks"})
	if err != nil {
		return explain(err)
	}
	fmt.Println(res.Text)
	for _, q := range queries {
		for _, tool := range []string{"vector_query", "hybrid_query"} {
			res, err := rt.App.Call(ctx, who, tool, map[string]any{"collection": "doc_chunks", "query": q, "k": 3})
			if err != nil {
				return explain(err)
			}
			fmt.Printf("\n%s %q\n", tool, q)
			var out queryResult
			if err := res.Decode(&out); err != nil {
				return err
			}
			for i, h := range out.Results {
				fmt.Printf("  %d. [%s #%d] score=%.4f  %s\n", i+1, h.Source, h.ChunkIndex, h.Score, preview(h.Content))
			}
		}
	}
	return nil
}

// queryResult is the part of vector_query's and hybrid_query's output
// this walkthrough prints, read with Result.Decode.
type queryResult struct {
	Results []struct {
		Source     string  `json:"source"`
		ChunkIndex int     `json:"chunk_index"`
		Score      float64 `json:"score"`
		Content    string  `json:"content"`
	} `json:"results"`
}

func preview(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		s = s[:90] + "..."
	}
	return s
}

func explain(err error) error {
	if te, ok := catalog.AsToolError(err); ok {
		return fmt.Errorf("%s: %s", te.Kind, te.Message)
	}
	return err
}
