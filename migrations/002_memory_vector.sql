-- 002_memory_vector: semantic recall for the memory backend. Applied only
-- when the database offers the vector extension (pg_available_extensions
-- lists it); without it the memory tables serve keyword recall alone.
--
-- This is a text/template rendered by migrations.Render; see 001_chunks.sql.
-- .Dim is the configured embedding width. A memory carries an embedding
-- only when semantic recall is configured, so the column may be null.
-- There is deliberately no ANN index: recall ranks one owner's namespace
-- (at most ARROWHEAD_MEMORY_MAX_ENTRIES_PER_NAMESPACE rows, read by the
-- primary key) exactly, where a table-wide HNSW index filtered to that
-- namespace afterwards would miss most of its rows. Every statement is
-- idempotent.

CREATE EXTENSION IF NOT EXISTS vector;

ALTER TABLE {{.Memories}} ADD COLUMN IF NOT EXISTS embedding vector({{.Dim}});
