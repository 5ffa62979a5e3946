-- gradient server state, gradient-server §9 (PostgreSQL). IDs are uuid, times timestamptz,
-- lists jsonb arrays. Status numbers are pinned by gradient-server §9:
--   build.status:          Created 0, Queued 1, Building 2, Completed 3, FailedPermanent 4,
--                          Aborted 5, DependencyFailed 6, Substituted 7, FailedTransient 8,
--                          FailedTimeout 9
--   evaluation.status:     Queued 0, EvaluatingFlake 1, EvaluatingDerivation 2, Building 3,
--                          Waiting 4, Completed 5, Failed 6, Aborted 7, Fetching 8
--   build_attempt.outcome: Running 0, Built 1, Substituted 2, Failed 3, Aborted 4

CREATE TABLE project (
    id               UUID PRIMARY KEY,
    name             TEXT NOT NULL UNIQUE,
    repo_url         TEXT NOT NULL,
    branch           TEXT NOT NULL DEFAULT '',
    wildcards        JSONB NOT NULL DEFAULT '[]',
    ssh_key_enc      BYTEA,
    force_evaluation BOOLEAN NOT NULL DEFAULT false,
    created_at       TIMESTAMPTZ NOT NULL
);

CREATE TABLE cache (
    id              UUID PRIMARY KEY,
    name            TEXT NOT NULL UNIQUE,
    public          BOOLEAN NOT NULL,
    signing_key_enc BYTEA,
    created_at      TIMESTAMPTZ NOT NULL
);

CREATE TABLE project_cache (
    project_id UUID NOT NULL REFERENCES project(id) ON DELETE CASCADE,
    cache_id   UUID NOT NULL REFERENCES cache(id) ON DELETE CASCADE,
    PRIMARY KEY (project_id, cache_id)
);
CREATE INDEX project_cache_by_cache ON project_cache(cache_id);

CREATE TABLE team (
    id         UUID PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE team_grant (
    team_id    UUID NOT NULL REFERENCES team(id) ON DELETE CASCADE,
    project_id UUID NOT NULL REFERENCES project(id) ON DELETE CASCADE,
    workers    BOOLEAN NOT NULL,
    PRIMARY KEY (team_id, project_id)
);

-- peer_id names a project or a cache (no foreign key: two possible tables); peer_kind is
-- session.PeerKind (project 0, cache 1, proxy 2).
CREATE TABLE worker_registration (
    id           UUID PRIMARY KEY,
    peer_id      UUID NOT NULL,
    peer_kind    SMALLINT NOT NULL CHECK (peer_kind BETWEEN 0 AND 2),
    worker_id    TEXT NOT NULL,
    token_hash   TEXT NOT NULL,
    token_enc    BYTEA,
    url          TEXT,
    active       BOOLEAN NOT NULL,
    enable_fetch BOOLEAN NOT NULL,
    enable_eval  BOOLEAN NOT NULL,
    enable_build BOOLEAN NOT NULL,
    display_name TEXT NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (peer_id, worker_id)
);
CREATE INDEX worker_registration_by_worker ON worker_registration(worker_id);

CREATE TABLE team_worker (
    id         UUID PRIMARY KEY,
    team_id    UUID NOT NULL REFERENCES team(id) ON DELETE CASCADE,
    worker_id  TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL,
    token_enc  BYTEA,
    url        TEXT,
    enabled    BOOLEAN NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE worker (
    worker_id         TEXT PRIMARY KEY,
    last_connected_at TIMESTAMPTZ,
    last_seen_at      TIMESTAMPTZ,
    capabilities      JSONB,
    offline_reason    TEXT
);

CREATE TABLE api_key (
    id         UUID PRIMARY KEY,
    owner      TEXT NOT NULL,
    key_hash   TEXT NOT NULL UNIQUE,
    cache_id   UUID REFERENCES cache(id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ
);

CREATE TABLE evaluation (
    id              UUID PRIMARY KEY,
    project_id      UUID NOT NULL REFERENCES project(id) ON DELETE CASCADE,
    commit_sha      TEXT NOT NULL,
    wildcards       JSONB NOT NULL,
    status          SMALLINT NOT NULL CHECK (status BETWEEN 0 AND 8),
    flake_source    TEXT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    eval_dispatches INTEGER NOT NULL DEFAULT 0,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX evaluation_by_project ON evaluation(project_id, id);
CREATE INDEX evaluation_queued ON evaluation(project_id, id) WHERE status = 0;

-- level: Error 0, Warning 1, Notice 2 (wire.EvalMessageLevel).
CREATE TABLE evaluation_message (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    evaluation_id UUID NOT NULL REFERENCES evaluation(id) ON DELETE CASCADE,
    level         SMALLINT NOT NULL CHECK (level BETWEEN 0 AND 2),
    source        TEXT NOT NULL,
    message       TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX evaluation_message_by_evaluation ON evaluation_message(evaluation_id, id);

-- A row with system NULL is a stub: a dependency named by an EvalResult batch before the
-- batch describing it arrived (a forward reference). Stubs have no build.
CREATE TABLE derivation (
    id                 UUID PRIMARY KEY,
    drv_path           TEXT NOT NULL UNIQUE,
    system             TEXT,
    required_features  JSONB NOT NULL DEFAULT '[]',
    timeout_secs       BIGINT,
    max_silent_secs    BIGINT,
    is_fixed_output    BOOLEAN NOT NULL DEFAULT false,
    prefer_local_build BOOLEAN NOT NULL DEFAULT false,
    allow_substitutes  BOOLEAN NOT NULL DEFAULT true,
    pname              TEXT NOT NULL DEFAULT '',
    created_at         TIMESTAMPTZ NOT NULL
);

CREATE TABLE derivation_dependency (
    derivation_id UUID NOT NULL REFERENCES derivation(id) ON DELETE CASCADE,
    depends_on_id UUID NOT NULL REFERENCES derivation(id) ON DELETE CASCADE,
    PRIMARY KEY (derivation_id, depends_on_id)
);
CREATE INDEX derivation_dependency_by_dependency ON derivation_dependency(depends_on_id);

CREATE TABLE cached_path (
    id              UUID PRIMARY KEY,
    store_hash      TEXT NOT NULL UNIQUE,
    store_path      TEXT NOT NULL,
    nar_hash        TEXT NOT NULL,
    nar_size        BIGINT NOT NULL,
    file_hash       TEXT,
    file_size       BIGINT,
    path_references JSONB NOT NULL DEFAULT '[]',
    deriver         TEXT,
    ca              TEXT,
    created_at      TIMESTAMPTZ NOT NULL,
    last_fetched_at TIMESTAMPTZ
);
CREATE INDEX cached_path_by_path ON cached_path(store_path);

CREATE TABLE cached_path_signature (
    cached_path_id UUID NOT NULL REFERENCES cached_path(id) ON DELETE CASCADE,
    cache_id       UUID NOT NULL REFERENCES cache(id) ON DELETE CASCADE,
    signature      TEXT,
    PRIMARY KEY (cached_path_id, cache_id)
);

CREATE TABLE derivation_output (
    derivation_id  UUID NOT NULL REFERENCES derivation(id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    path           TEXT NOT NULL,
    is_cached      BOOLEAN NOT NULL DEFAULT false,
    cached_path_id UUID REFERENCES cached_path(id) ON DELETE SET NULL,
    PRIMARY KEY (derivation_id, name)
);
CREATE INDEX derivation_output_by_path ON derivation_output(path);

CREATE TABLE entry_point (
    evaluation_id UUID NOT NULL REFERENCES evaluation(id) ON DELETE CASCADE,
    attr          TEXT NOT NULL,
    derivation_id UUID NOT NULL REFERENCES derivation(id),
    PRIMARY KEY (evaluation_id, attr)
);

-- One build per derivation, shared by every evaluation that needs it (build_job).
-- attempt counts attempts used (transient failures); not_before holds a FailedTransient
-- build back until its backoff passed.
CREATE TABLE build (
    id                 UUID PRIMARY KEY,
    derivation_id      UUID NOT NULL UNIQUE REFERENCES derivation(id),
    status             SMALLINT NOT NULL CHECK (status BETWEEN 0 AND 9),
    attempt            INTEGER NOT NULL DEFAULT 0,
    substituted        BOOLEAN NOT NULL DEFAULT false,
    lost_worker_streak INTEGER NOT NULL DEFAULT 0,
    inputs_loops       INTEGER NOT NULL DEFAULT 0,
    timeout_secs       BIGINT,
    max_silent_secs    BIGINT,
    not_before         TIMESTAMPTZ,
    queued_at          TIMESTAMPTZ,
    dispatched_at      TIMESTAMPTZ,
    updated_at         TIMESTAMPTZ NOT NULL
);
-- The candidate scan of gradient-server §6.1: startable builds in job-ID order.
CREATE INDEX build_startable ON build(id) WHERE status IN (1, 8);

CREATE TABLE build_job (
    evaluation_id UUID NOT NULL REFERENCES evaluation(id) ON DELETE CASCADE,
    build_id      UUID NOT NULL REFERENCES build(id) ON DELETE CASCADE,
    PRIMARY KEY (evaluation_id, build_id)
);
CREATE INDEX build_job_by_build ON build_job(build_id);

-- The assignment. kind: eval 0, build 1; exactly one of evaluation_id and build_id is set.
-- The partial unique indexes are the claim: one open assignment per job.
CREATE TABLE dispatched_job (
    id            UUID PRIMARY KEY,
    kind          SMALLINT NOT NULL CHECK (kind IN (0, 1)),
    job_id        TEXT NOT NULL,
    evaluation_id UUID REFERENCES evaluation(id) ON DELETE CASCADE,
    build_id      UUID REFERENCES build(id) ON DELETE CASCADE,
    worker_id     TEXT NOT NULL,
    dispatched_at TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ,
    outcome       TEXT CHECK (outcome IN ('completed', 'failed', 'abandoned', 'declined')),
    CHECK ((kind = 0) = (evaluation_id IS NOT NULL) AND (kind = 1) = (build_id IS NOT NULL)),
    CHECK ((finished_at IS NULL) = (outcome IS NULL))
);
CREATE UNIQUE INDEX dispatched_job_open_eval ON dispatched_job(evaluation_id) WHERE finished_at IS NULL;
CREATE UNIQUE INDEX dispatched_job_open_build ON dispatched_job(build_id) WHERE finished_at IS NULL;
CREATE INDEX dispatched_job_open_by_worker ON dispatched_job(worker_id) WHERE finished_at IS NULL;

-- log_ref: logs live in build_log_chunk, keyed by the attempt and each chunk's byte offset.
CREATE TABLE build_attempt (
    id             UUID PRIMARY KEY,
    build_id       UUID NOT NULL REFERENCES build(id) ON DELETE CASCADE,
    assignment_id  UUID NOT NULL UNIQUE REFERENCES dispatched_job(id) ON DELETE CASCADE,
    worker_id      TEXT NOT NULL,
    outcome        SMALLINT NOT NULL CHECK (outcome BETWEEN 0 AND 4),
    failure_reason TEXT,
    started_at     TIMESTAMPTZ NOT NULL,
    finished_at    TIMESTAMPTZ,
    log_bytes      BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX build_attempt_by_build ON build_attempt(build_id, started_at);
CREATE INDEX build_attempt_running ON build_attempt(id) WHERE outcome = 0;

CREATE TABLE build_log_chunk (
    attempt_id  UUID NOT NULL REFERENCES build_attempt(id) ON DELETE CASCADE,
    byte_offset BIGINT NOT NULL,
    data        BYTEA NOT NULL,
    PRIMARY KEY (attempt_id, byte_offset)
);
