-- 003_state: the state replicas share through ARROWHEAD_STATE_DSN: the
-- context packer's working sets (one row per owner and set name, the pins
-- in pin order as a JSON array). The task queue's tables are River's own,
-- applied by its migrator in the same run.
--
-- This is a text/template rendered by migrations.Render; see 001_chunks.sql.
-- Every statement is idempotent.

CREATE TABLE IF NOT EXISTS {{.WorkingSets}} (
    owner text NOT NULL,
    name text NOT NULL,
    items jsonb NOT NULL CHECK (jsonb_typeof(items) = 'array'),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner, name)
);
