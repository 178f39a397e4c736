-- 002_memory: the tables of the Postgres memory backend (memory family):
-- owner-scoped memories in namespaces, and the exact-key kv scratchpad.
--
-- This is a text/template rendered by migrations.Render; see 001_chunks.sql.
-- .Dim is the configured embedding width: memories carry an embedding only
-- when a semantic embedding provider is configured, so it may be null.
-- Every statement is idempotent.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE IF NOT EXISTS {{.Memories}} (
    owner text NOT NULL,
    namespace text NOT NULL,
    id text NOT NULL,
    content text NOT NULL,
    metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
    content_hash text NOT NULL,
    embedding vector({{.Dim}}),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner, namespace, id)
);

-- Listing a namespace newest first.
CREATE INDEX IF NOT EXISTS {{.MemoriesRecentIndex}} ON {{.Memories}} (owner, namespace, updated_at DESC);
{{- if .HNSW}}

-- Semantic recall (rows without an embedding are not indexed).
CREATE INDEX IF NOT EXISTS {{.MemoriesEmbeddingIndex}} ON {{.Memories}} USING hnsw (embedding vector_cosine_ops);
{{- end}}

CREATE TABLE IF NOT EXISTS {{.KV}} (
    owner text NOT NULL,
    key text NOT NULL,
    value text NOT NULL,
    expires_at timestamptz,
    PRIMARY KEY (owner, key)
);

-- Sweeping expired keys.
CREATE INDEX IF NOT EXISTS {{.KVExpiresIndex}} ON {{.KV}} (expires_at) WHERE expires_at IS NOT NULL;
