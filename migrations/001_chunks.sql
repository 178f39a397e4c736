-- 001_chunks: the pgvector chunk table behind vector_search, vector_query,
-- hybrid_query and doc_index, rendered once per allow-listed collection.
--
-- This is a text/template rendered by migrations.Render. Every substituted
-- name is an identifier that passed the strict guard ^[a-z_][a-z0-9_]{0,62}$
-- and was then quoted; .Dim is the configured width, checked against
-- pgvector's limits; .Language is the full-text configuration, guarded the
-- same way and written as a string literal. Every statement is idempotent.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE IF NOT EXISTS {{.Table}} (
    {{.ID}} text PRIMARY KEY,
    {{.Tenant}} text NOT NULL,
    {{.Source}} text NOT NULL,
    {{.ChunkIndex}} integer NOT NULL CHECK ({{.ChunkIndex}} >= 0),
    {{.Content}} text NOT NULL,
    {{.ContentHash}} text NOT NULL,
    {{.Tsvector}} tsvector GENERATED ALWAYS AS (to_tsvector({{.Language}}::regconfig, {{.Content}})) STORED,
    {{.Embedding}} vector({{.Dim}}) NOT NULL
);

-- One chunk per position of a source: serves Hashes, Truncate and Sources
-- (all filter on tenant and source) and refuses a second chunk id at a
-- position, which would make re-indexing ambiguous.
CREATE UNIQUE INDEX IF NOT EXISTS {{.PositionIndex}} ON {{.Table}} ({{.Tenant}}, {{.Source}}, {{.ChunkIndex}});

-- The full-text branch of hybrid_query.
CREATE INDEX IF NOT EXISTS {{.TsvectorIndex}} ON {{.Table}} USING gin ({{.Tsvector}});
{{- if .HNSW}}

-- Approximate nearest neighbours by cosine distance (the <=> operator).
-- pgvector indexes at most 2000 dimensions with HNSW; wider collections are
-- scanned exactly instead.
CREATE INDEX IF NOT EXISTS {{.EmbeddingIndex}} ON {{.Table}} USING hnsw ({{.Embedding}} vector_cosine_ops);
{{- end}}
