package data

// IndexWriteBatchChunks and IndexEmbedBatch bound one doc_index Upsert: a
// batch is flushed once it reaches IndexWriteBatchChunks, after adding at
// most IndexEmbedBatch chunks.
const (
	IndexWriteBatchChunks = indexWriteBatchChunks
	IndexEmbedBatch       = indexEmbedBatch
)
