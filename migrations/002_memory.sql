-- 002_memory: the tables of the PostgreSQL memory backend (memory family):
-- owner-scoped memories in namespaces, and the exact-key kv scratchpad.
-- Plain PostgreSQL, no extension: keyword recall matches the terms the
-- server extracted when it wrote the record (ports.MemoryTerms), so the
-- same words match as on the embedded backend. The embedding column of
-- semantic recall is 002_memory_vector's, applied only where pgvector is.
--
-- This is a text/template rendered by migrations.Render; see 001_chunks.sql.
-- Content and values are bytea: text cannot hold a NUL byte, which a caller
-- may legitimately store. Every statement is idempotent.

-- One row per owner: the bytes counted against ARROWHEAD_MEMORY_QUOTA_BYTES,
-- and the row every write of the owner locks first, so the per-owner bounds
-- hold across replicas.
CREATE TABLE IF NOT EXISTS {{.Owners}} (
    owner text PRIMARY KEY,
    used_bytes bigint NOT NULL DEFAULT 0 CHECK (used_bytes >= 0)
);

CREATE TABLE IF NOT EXISTS {{.Memories}} (
    owner text NOT NULL,
    namespace text NOT NULL,
    id text NOT NULL,
    content bytea NOT NULL,
    metadata bytea,
    content_hash text NOT NULL,
    terms text[] NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    written_by_tool text NOT NULL,
    written_by_caller text NOT NULL,
    written_at timestamptz NOT NULL,
    PRIMARY KEY (owner, namespace, id)
);

-- Dedup: the record holding some content in a namespace.
CREATE INDEX IF NOT EXISTS {{.MemoriesHashIndex}} ON {{.Memories}} (owner, namespace, content_hash);

-- Listing a namespace oldest first.
CREATE INDEX IF NOT EXISTS {{.MemoriesCreatedIndex}} ON {{.Memories}} (owner, namespace, created_at, id);

CREATE TABLE IF NOT EXISTS {{.KV}} (
    owner text NOT NULL,
    key text NOT NULL,
    value bytea NOT NULL,
    expires_at timestamptz,
    updated_at timestamptz NOT NULL,
    written_by_tool text NOT NULL,
    written_by_caller text NOT NULL,
    written_at timestamptz NOT NULL,
    PRIMARY KEY (owner, key)
);

-- Reaping an owner's expired keys.
CREATE INDEX IF NOT EXISTS {{.KVExpiresIndex}} ON {{.KV}} (owner, expires_at) WHERE expires_at IS NOT NULL;
