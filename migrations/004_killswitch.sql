-- 004_killswitch: the live kill switch's rules on the state backend
-- (ARROWHEAD_STATE_DSN), when no Redis carries them. A change is announced
-- with NOTIFY on the channel arrowhead_kill; every replica LISTENs and
-- reloads the table.
--
-- This is a text/template rendered by migrations.Render; see 001_chunks.sql.
-- Every statement is idempotent.

CREATE TABLE IF NOT EXISTS {{.KillRules}} (
    id text PRIMARY KEY,
    rule jsonb NOT NULL CHECK (jsonb_typeof(rule) = 'object'),
    until timestamptz,
    created_at timestamptz NOT NULL
);
