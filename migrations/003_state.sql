-- 003_state: the state replicas share through ARROWHEAD_STATE_DSN: the
-- context packer's working sets (one row per owner and set name, the pins
-- in pin order as a JSON array) and the task registry's tasks and timers.
-- The job queue that runs the tasks is River's, whose own migrator applies
-- its tables in the same run (arrowhead migrate).
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

-- A task's input and result are the caller's JSON kept byte for byte
-- (bytea, not jsonb, which would reformat it). job_id is the River job that
-- runs it; started_at is set when its work first began, so a second run
-- (River rescued the job of a replica that died) knows it was interrupted.
CREATE TABLE IF NOT EXISTS {{.Tasks}} (
    owner text NOT NULL,
    id text NOT NULL,
    kind text NOT NULL,
    status text NOT NULL CHECK (status IN ('working', 'completed', 'failed', 'cancelled')),
    principal jsonb NOT NULL,
    input bytea,
    result bytea,
    error text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    started_at timestamptz,
    due_at timestamptz,
    repeat_us bigint NOT NULL DEFAULT 0 CHECK (repeat_us >= 0),
    next_id text NOT NULL DEFAULT '',
    job_id bigint,
    PRIMARY KEY (owner, id)
);

-- Counting an owner's working tasks and timers against their bounds.
CREATE INDEX IF NOT EXISTS {{.TasksStatusIndex}} ON {{.Tasks}} (owner, status, kind);

-- Sweeping finished tasks past their TTL.
CREATE INDEX IF NOT EXISTS {{.TasksFinishedIndex}} ON {{.Tasks}} (updated_at) WHERE status <> 'working';
