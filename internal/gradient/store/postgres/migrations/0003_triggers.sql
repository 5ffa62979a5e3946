-- Triggers, gradient-server §11: what each project follows and how it hears of changes, the
-- heads it has seen (one evaluation per head commit), and the branch an evaluation ran for.
ALTER TABLE evaluation ADD COLUMN branch TEXT NOT NULL DEFAULT '';

CREATE TABLE project_trigger (
    project_id         UUID PRIMARY KEY REFERENCES project(id) ON DELETE CASCADE,
    branches           JSONB NOT NULL DEFAULT '[]',
    tags               BOOLEAN NOT NULL DEFAULT false,
    poll               BOOLEAN NOT NULL DEFAULT false,
    webhook_secret_enc BYTEA,
    last_poll_at       TIMESTAMPTZ,
    last_poll_error    TEXT NOT NULL DEFAULT ''
);

-- evaluation_id has no foreign key: a head stays seen after its evaluation is deleted.
CREATE TABLE trigger_head (
    project_id    UUID NOT NULL REFERENCES project(id) ON DELETE CASCADE,
    commit_sha    TEXT NOT NULL,
    branch        TEXT NOT NULL,
    source        TEXT NOT NULL,
    evaluation_id UUID,
    created_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (project_id, commit_sha)
);
