package data

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// indexEmbedBatch is how many chunks doc_index embeds per request; the
// embedder splits further by its own batch size.
const indexEmbedBatch = 256

// DocIndex declares doc_index.
func DocIndex(d Deps) catalog.ToolSpec {
	count := func(desc string) *catalog.Schema { return catalog.Integer(desc, 0, 1<<31) }
	return catalog.MustTool(catalog.ToolDef{
		Name:    "doc_index",
		Family:  catalog.FamilyData,
		Scope:   "vector:write",
		Ceiling: catalog.Ceiling{Var: "ARROWHEAD_VECTOR_INDEX_PER_MINUTE", Default: 6},
		Description: "Index corpus documents into a collection for vector_query and hybrid_query: chunk, embed and store under the caller's tenant; unchanged chunks are not re-embedded and chunks of deleted or shrunk documents are removed. " +
			"Example: doc_index(collection=\"doc_chunks\", path_prefix=\"handbook/\")",
		Input: catalog.Object(map[string]*catalog.Schema{
			"collection":  catalog.String("An allow-listed collection.", 63),
			"path_prefix": catalog.String("Only documents under this prefix.", security.MaxPathBytes),
		}, "collection"),
		Output: catalog.Object(map[string]*catalog.Schema{
			"documents_indexed": count("Documents chunked."),
			"documents_skipped": count("Documents not indexed (not readable, refused by the sanitizer, or over a cap)."),
			"documents_removed": count("Sources deleted from the collection because the document is gone."),
			"chunks_total":      count("Chunks now stored for the indexed documents."),
			"chunks_embedded":   count("Chunks embedded in this run (new or changed)."),
			"chunks_unchanged":  count("Chunks whose content hash was unchanged (not re-embedded)."),
			"chunks_removed":    count("Sources truncated because a document shrank."),
			"truncated":         catalog.Array("Caps that cut the run short: files, chunks, timeout.", catalog.String("", 0), 0),
			"semantic":          catalog.Boolean("False when the embedder is the deterministic, non-semantic one."),
		}, "documents_indexed", "documents_skipped", "documents_removed", "chunks_total", "chunks_embedded", "chunks_unchanged", "chunks_removed", "truncated", "semantic"),
		Annotations: catalog.Annotations{Title: "Index documents", Idempotent: true},
		Handler: func(ctx context.Context, call catalog.Call) (catalog.Result, error) {
			var args struct {
				Collection string `json:"collection"`
				PathPrefix string `json:"path_prefix"`
			}
			if err := call.Bind(&args); err != nil {
				return catalog.Result{}, err
			}
			coll, err := d.collection(args.Collection)
			if err != nil {
				return catalog.Result{}, err
			}
			if err := d.authorizeTable(ctx, call.Principal, ports.ActionIngest, coll); err != nil {
				return catalog.Result{}, err
			}
			prefix, err := security.CleanRelPrefix(args.PathPrefix)
			if err != nil {
				return catalog.Result{}, catalog.Invalid("The path prefix is refused: %s.", err.Error())
			}
			if d.Writer == nil || d.Embedder == nil {
				return catalog.Result{}, catalog.Unavailable("Ingestion is not configured (ARROWHEAD_VECTOR_WRITE_DSN).")
			}
			if d.Documents == nil {
				return catalog.Result{}, catalog.Unavailable("The document corpus is not configured.")
			}
			ctx, cancel := context.WithTimeout(ctx, settings.Seconds(d.Settings.VectorIndexTimeoutSeconds))
			defer cancel()
			rep, err := d.index(ctx, call, coll, prefix)
			if err != nil {
				return catalog.Result{}, err
			}
			return rep.result(d.Embedder.Semantic()), nil
		},
	})
}

type indexReport struct {
	indexed, skipped, removedDocs      int
	total, embedded, unchanged, shrunk int
	truncated                          []string
}

func (r indexReport) result(semantic bool) catalog.Result {
	tr := make([]any, len(r.truncated))
	for i, t := range r.truncated {
		tr[i] = t
	}
	return catalog.Result{
		Structured: map[string]any{
			"documents_indexed": r.indexed,
			"documents_skipped": r.skipped,
			"documents_removed": r.removedDocs,
			"chunks_total":      r.total,
			"chunks_embedded":   r.embedded,
			"chunks_unchanged":  r.unchanged,
			"chunks_removed":    r.shrunk,
			"truncated":         tr,
			"semantic":          semantic,
		},
		Text: "Indexed " + strconv.Itoa(r.indexed) + " documents: " + strconv.Itoa(r.embedded) + " chunks embedded, " +
			strconv.Itoa(r.unchanged) + " unchanged, " + strconv.Itoa(r.removedDocs) + " removed documents.",
	}
}

// ChunkID derives a chunk's id from its tenant, source and index, so a
// re-index replaces a document's chunks in place and ids never collide
// across tenants.
func ChunkID(tenant, source string, index int) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + source + "\x00" + strconv.Itoa(index)))
	return hex.EncodeToString(sum[:16])
}

func (d Deps) index(ctx context.Context, call catalog.Call, coll, prefix string) (indexReport, error) {
	s := d.Settings
	var rep indexReport
	owner := tenant(call.Principal)
	listed, listTruncated, err := d.Documents.List(ctx, prefix, s.VectorIndexMaxFiles)
	if err != nil {
		return rep, catalog.Failed("The corpus could not be listed.").WithCause(err)
	}
	if listTruncated {
		rep.truncated = append(rep.truncated, "files")
	}
	present := map[string]bool{}
	budget := s.VectorIndexMaxChunks
	for i, f := range listed {
		if ctx.Err() != nil {
			rep.truncated = append(rep.truncated, "timeout")
			break
		}
		present[f.Path] = true
		if call.Progress != nil {
			call.Progress(float64(i), float64(len(listed)), "indexing")
		}
		if d.Authorizer == nil || !d.Authorizer.Authorize(ctx, call.Principal, ports.ActionRead, ports.Resource{Kind: ports.KindDocument, ID: f.Path}).Allowed {
			rep.skipped++
			continue
		}
		chunks, ok := d.chunksOf(ctx, f.Path, budget+1)
		if !ok {
			rep.skipped++
			continue
		}
		if len(chunks) > budget {
			rep.truncated = append(rep.truncated, "chunks")
			break
		}
		budget -= len(chunks)
		if err := d.indexDocument(ctx, coll, owner, f.Path, chunks, &rep); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				rep.truncated = append(rep.truncated, "timeout")
				break
			}
			return rep, err
		}
		rep.indexed++
	}
	// Remove documents that are gone, but only after a complete listing:
	// a capped or interrupted run must not delete what it did not see.
	if len(rep.truncated) == 0 {
		sources, err := d.Writer.Sources(ctx, coll, owner, prefix)
		if err != nil {
			return rep, vectorRefusal(err)
		}
		for _, src := range sources {
			if present[src] || !underPrefix(src, prefix) {
				continue
			}
			if err := d.Writer.Truncate(ctx, coll, owner, src, 0); err != nil {
				return rep, vectorRefusal(err)
			}
			rep.removedDocs++
		}
	}
	if call.Progress != nil {
		call.Progress(float64(len(listed)), float64(len(listed)), "done")
	}
	return rep, nil
}

// chunksOf reads, sanitizes and chunks one document; ok is false when the
// document cannot be indexed (gone, too large, refused by its sanitizer).
func (d Deps) chunksOf(ctx context.Context, rel string, maxChunks int) ([]string, bool) {
	s := d.Settings
	raw, _, err := d.Documents.Read(ctx, rel, int64(s.DocMaxBytes))
	if err != nil {
		return nil, false
	}
	var text string
	switch strings.ToLower(path.Ext(rel)) {
	case ".json":
		text, err = content.SanitizeJSON(raw, content.JSONLimits{MaxBytes: s.DocMaxBytes, MaxDepth: s.JSONMaxDepth, MaxElements: s.JSONMaxElements})
	case ".md", ".markdown":
		text, err = content.SanitizeMarkdown(raw)
	default:
		text, err = content.SanitizeText(raw)
	}
	if err != nil {
		return nil, false
	}
	return content.ChunkFor(rel, text, content.ChunkSettings{
		TextMaxChars: s.VectorIndexChunkMaxChars,
		TextOverlap:  s.VectorIndexChunkOverlap,
		CodeMaxChars: s.CodeChunkMaxChars,
		MaxChunks:    maxChunks,
	}), true
}

// indexDocument embeds only the chunks whose hash changed, upserts them and
// trims chunks past the document's new end.
func (d Deps) indexDocument(ctx context.Context, coll, owner, source string, chunks []string, rep *indexReport) error {
	existing, err := d.Writer.Hashes(ctx, coll, owner, source)
	if err != nil {
		return vectorRefusal(err)
	}
	var changed []ports.Chunk
	for i, c := range chunks {
		sum := sha256.Sum256([]byte(c))
		hash := hex.EncodeToString(sum[:])
		if d.Settings.IndexReuseUnchanged && existing[i] == hash {
			rep.unchanged++
			continue
		}
		changed = append(changed, ports.Chunk{ID: ChunkID(owner, source, i), Tenant: owner, Source: source, Index: i, Content: c, Hash: hash})
	}
	for start := 0; start < len(changed); start += indexEmbedBatch {
		batch := changed[start:min(start+indexEmbedBatch, len(changed))]
		texts := make([]string, len(batch))
		for i, c := range batch {
			texts[i] = c.Content
		}
		vecs, err := d.Embedder.Embed(ctx, texts)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return catalog.Failed("The chunks could not be embedded.").WithCause(err)
		}
		if len(vecs) != len(batch) {
			return catalog.Failed("The embedder returned the wrong number of vectors.")
		}
		for i := range batch {
			batch[i].Embedding = vecs[i]
		}
		if err := d.Writer.Upsert(ctx, coll, batch); err != nil {
			return vectorRefusal(err)
		}
		rep.embedded += len(batch)
	}
	if len(existing) > len(chunks) {
		if err := d.Writer.Truncate(ctx, coll, owner, source, len(chunks)); err != nil {
			return vectorRefusal(err)
		}
		rep.shrunk++
	}
	rep.total += len(chunks)
	return nil
}

// underPrefix matches on a path-component boundary.
func underPrefix(p, prefix string) bool {
	if prefix == "" {
		return true
	}
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	return strings.HasSuffix(prefix, "/") || len(p) == len(prefix) || p[len(prefix)] == '/'
}
