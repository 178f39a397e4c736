package data

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

// indexEmbedBatch is how many chunks doc_index embeds per request; the
// embedder splits further by its own batch size.
const indexEmbedBatch = 256

// A vector write is one transaction (an fsync on the embedded index), so
// doc_index gathers the embedded chunks of several documents into one
// Upsert. The batch is flushed when it holds indexWriteBatchChunks chunks
// or indexWriteBatchBytes of content and vectors, and at the end of a run.
const (
	indexWriteBatchChunks = 2048
	indexWriteBatchBytes  = 8 << 20
)

type docIndexInput struct {
	Collection string `json:"collection" description:"An allow-listed collection." maxLength:"63"`
	PathPrefix string `json:"path_prefix,omitempty" description:"Only documents under this prefix." maxLength:"$path"`
}

type docIndexOutput struct {
	DocumentsIndexed int      `json:"documents_indexed" description:"Documents chunked." minimum:"0" maximum:"$count"`
	DocumentsSkipped int      `json:"documents_skipped" description:"Documents not indexed (not readable, refused by the sanitizer, or over a cap)." minimum:"0" maximum:"$count"`
	DocumentsRemoved int      `json:"documents_removed" description:"Sources deleted from the collection because the document is gone." minimum:"0" maximum:"$count"`
	ChunksTotal      int      `json:"chunks_total" description:"Chunks now stored for the indexed documents." minimum:"0" maximum:"$count"`
	ChunksEmbedded   int      `json:"chunks_embedded" description:"Chunks embedded in this run (new or changed)." minimum:"0" maximum:"$count"`
	ChunksUnchanged  int      `json:"chunks_unchanged" description:"Chunks whose content hash was unchanged (not re-embedded)." minimum:"0" maximum:"$count"`
	ChunksRemoved    int      `json:"chunks_removed" description:"Sources truncated because a document shrank." minimum:"0" maximum:"$count"`
	Truncated        []string `json:"truncated" description:"Caps that cut the run short: files, chunks, timeout."`
	Semantic         bool     `json:"semantic" description:"False when the embedder is the deterministic, non-semantic one."`
}

// docIndex defines doc_index.
var docIndex = catalog.Define[docIndexInput, docIndexOutput](catalog.ToolDef{
	Name:    "doc_index",
	Scope:   "vector:write",
	Ceiling: catalog.Ceiling{Var: "ARROWHEAD_VECTOR_INDEX_PER_MINUTE", Default: 6},
	Description: "Index corpus documents into a collection for vector_query and hybrid_query: chunk, embed and store under the caller's tenant; unchanged chunks are not re-embedded and chunks of deleted or shrunk documents are removed. " +
		"Example: doc_index(collection=\"doc_chunks\", path_prefix=\"handbook/\")",
	Annotations: catalog.Annotations{Title: "Index documents", Idempotent: true},
})

// index serves doc_index: the corpus it reads, the embedder, the vector
// writer and the table gate.
func (x *server) index(ctx context.Context, call catalog.Call, in docIndexInput) (*catalog.Reply[docIndexOutput], error) {
	coll := in.Collection
	if err := x.collection(ctx, call.Principal, ports.ActionIngest, coll); err != nil {
		return nil, err
	}
	prefix, err := catalog.CleanPrefix(in.PathPrefix)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, x.config.IndexTimeout)
	defer cancel()
	rep, err := x.run(ctx, call, coll, prefix)
	if err != nil {
		return nil, err
	}
	return rep.reply(x.Embedder.Semantic(), x.config), nil
}

type indexReport struct {
	indexed, skipped, removedDocs      int
	total, embedded, unchanged, shrunk int
	truncated                          []string
}

func (r indexReport) reply(semantic bool, c Config) *catalog.Reply[docIndexOutput] {
	var text strings.Builder
	fmt.Fprintf(&text, "Indexed %s: %s embedded, %d unchanged; %s removed.", catalog.Count(r.indexed, "documents"),
		catalog.Count(r.embedded, "chunks"), r.unchanged, catalog.Count(r.removedDocs, "documents"))
	if r.skipped > 0 {
		fmt.Fprintf(&text, " Skipped %s: not authorized, unreadable, larger than ARROWHEAD_DOC_MAX_BYTES or refused by the sanitizer.",
			catalog.Count(r.skipped, "documents"))
	}
	for _, bound := range r.truncated {
		switch bound {
		case "files":
			fmt.Fprintf(&text, " The run did not finish: it lists at most ARROWHEAD_VECTOR_INDEX_MAX_FILES (%d) documents, and more exist.", c.IndexMaxFiles)
		case "chunks":
			fmt.Fprintf(&text, " The run did not finish: the next document would have passed ARROWHEAD_VECTOR_INDEX_MAX_CHUNKS (%d), the chunks one run may write.", c.IndexMaxChunks)
		case "timeout":
			fmt.Fprintf(&text, " The run did not finish: ARROWHEAD_VECTOR_INDEX_TIMEOUT_SECONDS (%s) ran out.", c.IndexTimeout)
		}
	}
	if len(r.truncated) > 0 {
		text.WriteString(" Documents gone from the corpus are removed from the index only by a run that finishes; run again with a narrower path_prefix.")
	}
	return catalog.Answer(docIndexOutput{
		DocumentsIndexed: r.indexed,
		DocumentsSkipped: r.skipped,
		DocumentsRemoved: r.removedDocs,
		ChunksTotal:      r.total,
		ChunksEmbedded:   r.embedded,
		ChunksUnchanged:  r.unchanged,
		ChunksRemoved:    r.shrunk,
		Truncated:        r.truncated,
		Semantic:         semantic,
	}, text.String())
}

// ChunkID derives a chunk's id from its tenant, source and index, so a
// re-index replaces a document's chunks in place and ids never collide
// across tenants.
func ChunkID(tenant, source string, index int) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + source + "\x00" + strconv.Itoa(index)))
	return hex.EncodeToString(sum[:16])
}

func (x *server) run(ctx context.Context, call catalog.Call, coll, prefix string) (indexReport, error) {
	c := x.config
	var rep indexReport
	owner := tenant(call.Principal)
	listed, listTruncated, err := x.Documents.List(ctx, prefix, c.IndexMaxFiles)
	if err != nil {
		return rep, catalog.Failed("The corpus could not be listed.").WithCause(err)
	}
	if listTruncated {
		rep.truncated = append(rep.truncated, "files")
	}
	present := map[string]bool{}
	budget := c.IndexMaxChunks
	w := &indexWrites{writer: x.Writer, coll: coll, owner: owner, rep: &rep}
	timedOut := false
	for i, f := range listed {
		if ctx.Err() != nil {
			timedOut = true
			break
		}
		present[f.Path] = true
		if call.Progress != nil {
			call.Progress(float64(i), float64(len(listed)), "indexing")
		}
		if !x.Authorizer.Authorize(ctx, call.Principal, ports.ActionRead, ports.Resource{Kind: ports.KindDocument, ID: f.Path}).Allowed {
			rep.skipped++
			continue
		}
		chunks, ok := x.chunksOf(ctx, f.Path, budget+1)
		if !ok {
			rep.skipped++
			continue
		}
		if len(chunks) > budget {
			rep.truncated = append(rep.truncated, "chunks")
			break
		}
		budget -= len(chunks)
		if err := x.indexDocument(ctx, w, f.Path, chunks); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				timedOut = true
				break
			}
			return rep, err
		}
	}
	// The documents still queued are written now; after a timeout they
	// cannot be, and stay unwritten and unreported.
	if !timedOut {
		if err := w.flush(ctx); err != nil {
			if !errors.Is(err, context.DeadlineExceeded) {
				return rep, err
			}
			timedOut = true
		}
	}
	if timedOut {
		rep.truncated = append(rep.truncated, "timeout")
	}
	// Remove documents that are gone, but only after a complete listing:
	// a capped or interrupted run must not delete what it did not see.
	if len(rep.truncated) == 0 {
		sources, err := x.Writer.Sources(ctx, coll, owner, prefix)
		if err != nil {
			return rep, vectorRefusal(err)
		}
		for _, src := range sources {
			if present[src] || !underPrefix(src, prefix) {
				continue
			}
			if err := x.Writer.Truncate(ctx, coll, owner, src, 0); err != nil {
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
func (x *server) chunksOf(ctx context.Context, rel string, maxChunks int) ([]string, bool) {
	raw, _, err := x.Documents.Read(ctx, rel, x.config.DocMaxBytes)
	if err != nil {
		return nil, false
	}
	text, err := content.SanitizeDocument(rel, raw, x.config.DocJSON)
	if err != nil {
		return nil, false
	}
	chunking := x.config.Chunks
	chunking.MaxChunks = maxChunks
	return content.ChunkFor(rel, text, chunking), true
}

// indexDocument embeds only the chunks whose hash changed and queues them,
// with the trimming of chunks past the document's new end, on w.
func (x *server) indexDocument(ctx context.Context, w *indexWrites, source string, chunks []string) error {
	existing, err := w.writer.Hashes(ctx, w.coll, w.owner, source)
	if err != nil {
		return vectorRefusal(err)
	}
	doc := pendingDocument{source: source, chunks: len(chunks), shrunk: len(existing) > len(chunks)}
	var changed []ports.Chunk
	for i, c := range chunks {
		sum := sha256.Sum256([]byte(c))
		hash := hex.EncodeToString(sum[:])
		if x.config.IndexReuseUnchanged && existing[i] == hash {
			doc.unchanged++
			continue
		}
		changed = append(changed, ports.Chunk{ID: ChunkID(w.owner, source, i), Tenant: w.owner, Source: source, Index: i, Content: c, Hash: hash})
	}
	for start := 0; start < len(changed); start += indexEmbedBatch {
		batch := changed[start:min(start+indexEmbedBatch, len(changed))]
		texts := make([]string, len(batch))
		for i, c := range batch {
			texts[i] = c.Content
		}
		vecs, err := x.Embedder.Embed(ctx, texts)
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
		if err := w.add(ctx, batch); err != nil {
			return err
		}
	}
	if len(changed) == 0 || len(w.chunks) == 0 {
		return w.finish(ctx, doc) // nothing of it is waiting to be written
	}
	w.docs = append(w.docs, doc)
	return nil
}

// pendingDocument is a document whose chunks are all embedded and queued:
// it is reported, and trimmed when it shrank, once they are written.
type pendingDocument struct {
	source            string
	chunks, unchanged int
	shrunk            bool
}

// indexWrites batches doc_index's upserts across documents. Each document's
// chunks are upserted before its trim (the two touch different chunk
// indexes, and documents touch different sources, so no other order
// matters), and a document counts in the report only once all of its writes
// succeeded.
type indexWrites struct {
	writer      ports.VectorWriter
	coll, owner string
	rep         *indexReport
	chunks      []ports.Chunk
	bytes       int
	docs        []pendingDocument
}

// add queues embedded chunks, flushing when the batch is full.
func (w *indexWrites) add(ctx context.Context, chunks []ports.Chunk) error {
	w.chunks = append(w.chunks, chunks...)
	for _, c := range chunks {
		w.bytes += len(c.Content) + 4*len(c.Embedding)
	}
	if len(w.chunks) >= indexWriteBatchChunks || w.bytes >= indexWriteBatchBytes {
		return w.flush(ctx)
	}
	return nil
}

// flush writes the queued chunks in one Upsert, then finishes the queued
// documents.
func (w *indexWrites) flush(ctx context.Context) error {
	if len(w.chunks) > 0 {
		if err := w.writer.Upsert(ctx, w.coll, w.chunks); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return vectorRefusal(err)
		}
		w.rep.embedded += len(w.chunks)
	}
	docs := w.docs
	w.chunks, w.bytes, w.docs = nil, 0, nil
	for _, doc := range docs {
		if err := w.finish(ctx, doc); err != nil {
			return err
		}
	}
	return nil
}

// finish trims a written document that shrank and reports it.
func (w *indexWrites) finish(ctx context.Context, doc pendingDocument) error {
	if doc.shrunk {
		if err := w.writer.Truncate(ctx, w.coll, w.owner, doc.source, doc.chunks); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return vectorRefusal(err)
		}
		w.rep.shrunk++
	}
	w.rep.indexed++
	w.rep.unchanged += doc.unchanged
	w.rep.total += doc.chunks
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
