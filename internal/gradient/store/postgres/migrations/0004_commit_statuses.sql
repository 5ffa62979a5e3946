-- Commit statuses and the outgoing webhook, gradient-server §12 (PostgreSQL). A project's
-- settings: the forge's API (token sealed by the server's key), statuses per build, and the
-- webhook (secret sealed too).
CREATE TABLE project_status (
    project_id        UUID PRIMARY KEY REFERENCES project(id) ON DELETE CASCADE,
    forge             TEXT NOT NULL DEFAULT '',
    api_url           TEXT NOT NULL DEFAULT '',
    repo              TEXT NOT NULL DEFAULT '',
    token_enc         BYTEA,
    per_build         BOOLEAN NOT NULL DEFAULT false,
    notify_url        TEXT NOT NULL DEFAULT '',
    notify_secret_enc BYTEA,
    updated_at        TIMESTAMPTZ NOT NULL
);

-- The outbox: one row per status and sink ('forge' or 'webhook'), written in the transaction
-- that changed the evaluation or build, so a restart loses none. outcome is '' while queued,
-- then 'delivered', 'failed' (given up) or 'superseded' (a newer state of the same context
-- was queued before this one went out).
CREATE TABLE status_outbox (
    id            UUID PRIMARY KEY,
    evaluation_id UUID NOT NULL REFERENCES evaluation(id) ON DELETE CASCADE,
    build_id      UUID,
    attr          TEXT NOT NULL DEFAULT '',
    sink          TEXT NOT NULL,
    context       TEXT NOT NULL,
    state         TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    attempts      INTEGER NOT NULL DEFAULT 0,
    next_at       TIMESTAMPTZ NOT NULL,
    outcome       TEXT NOT NULL DEFAULT '',
    last_error    TEXT NOT NULL DEFAULT '',
    last_http     INTEGER NOT NULL DEFAULT 0,
    delivered_at  TIMESTAMPTZ,
    created_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX status_outbox_due ON status_outbox(next_at, id) WHERE outcome = '';
CREATE INDEX status_outbox_by_evaluation ON status_outbox(evaluation_id, id);
