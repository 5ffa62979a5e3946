-- gradient server state, gradient-server §9. IDs are UUID text, times are Unix microseconds
-- (UTC), booleans 0/1, lists JSON arrays. Status numbers are pinned by gradient-server §9:
--   build.status:          Created 0, Queued 1, Building 2, Completed 3, FailedPermanent 4,
--                          Aborted 5, DependencyFailed 6, Substituted 7, FailedTransient 8,
--                          FailedTimeout 9
--   evaluation.status:     Queued 0, EvaluatingFlake 1, EvaluatingDerivation 2, Building 3,
--                          Waiting 4, Completed 5, Failed 6, Aborted 7, Fetching 8
--   build_attempt.outcome: Running 0, Built 1, Substituted 2, Failed 3, Aborted 4

CREATE TABLE project (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL UNIQUE,
    repo_url         TEXT NOT NULL,
    branch           TEXT NOT NULL DEFAULT '',
    wildcards        TEXT NOT NULL DEFAULT '[]',
    ssh_key_enc      BLOB,
    force_evaluation INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL
);

CREATE TABLE cache (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL UNIQUE,
    public          INTEGER NOT NULL,
    signing_key_enc BLOB,
    created_at      INTEGER NOT NULL
);

CREATE TABLE project_cache (
    project_id TEXT NOT NULL REFERENCES project(id) ON DELETE CASCADE,
    cache_id   TEXT NOT NULL REFERENCES cache(id) ON DELETE CASCADE,
    PRIMARY KEY (project_id, cache_id)
);
CREATE INDEX project_cache_by_cache ON project_cache(cache_id);

CREATE TABLE team (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);

CREATE TABLE team_grant (
    team_id    TEXT NOT NULL REFERENCES team(id) ON DELETE CASCADE,
    project_id TEXT NOT NULL REFERENCES project(id) ON DELETE CASCADE,
    workers    INTEGER NOT NULL,
    PRIMARY KEY (team_id, project_id)
);

-- peer_id names a project or a cache (no foreign key: two possible tables); peer_kind is
-- session.PeerKind (project 0, cache 1, proxy 2).
CREATE TABLE worker_registration (
    id           TEXT PRIMARY KEY,
    peer_id      TEXT NOT NULL,
    peer_kind    INTEGER NOT NULL CHECK (peer_kind BETWEEN 0 AND 2),
    worker_id    TEXT NOT NULL,
    token_hash   TEXT NOT NULL,
    token_enc    BLOB,
    url          TEXT,
    active       INTEGER NOT NULL,
    enable_fetch INTEGER NOT NULL,
    enable_eval  INTEGER NOT NULL,
    enable_build INTEGER NOT NULL,
    display_name TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    UNIQUE (peer_id, worker_id)
);
CREATE INDEX worker_registration_by_worker ON worker_registration(worker_id);

CREATE TABLE team_worker (
    id         TEXT PRIMARY KEY,
    team_id    TEXT NOT NULL REFERENCES team(id) ON DELETE CASCADE,
    worker_id  TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL,
    token_enc  BLOB,
    url        TEXT,
    enabled    INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE worker (
    worker_id         TEXT PRIMARY KEY,
    last_connected_at INTEGER,
    last_seen_at      INTEGER,
    capabilities      TEXT,
    offline_reason    TEXT
);

CREATE TABLE api_key (
    id         TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    key_hash   TEXT NOT NULL UNIQUE,
    cache_id   TEXT REFERENCES cache(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);

CREATE TABLE evaluation (
    id              TEXT PRIMARY KEY,
    project_id      TEXT NOT NULL REFERENCES project(id) ON DELETE CASCADE,
    commit_sha      TEXT NOT NULL,
    wildcards       TEXT NOT NULL,
    status          INTEGER NOT NULL CHECK (status BETWEEN 0 AND 8),
    flake_source    TEXT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    eval_dispatches INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX evaluation_by_project ON evaluation(project_id, id);
CREATE INDEX evaluation_queued ON evaluation(project_id, id) WHERE status = 0;

-- level: Error 0, Warning 1, Notice 2 (wire.EvalMessageLevel).
CREATE TABLE evaluation_message (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    evaluation_id TEXT NOT NULL REFERENCES evaluation(id) ON DELETE CASCADE,
    level         INTEGER NOT NULL CHECK (level BETWEEN 0 AND 2),
    source        TEXT NOT NULL,
    message       TEXT NOT NULL,
    created_at    INTEGER NOT NULL
);
CREATE INDEX evaluation_message_by_evaluation ON evaluation_message(evaluation_id, id);

-- A row with system NULL is a stub: a dependency named by an EvalResult batch before the
-- batch describing it arrived (a forward reference). Stubs have no build.
CREATE TABLE derivation (
    id                 TEXT PRIMARY KEY,
    drv_path           TEXT NOT NULL UNIQUE,
    system             TEXT,
    required_features  TEXT NOT NULL DEFAULT '[]',
    timeout_secs       INTEGER,
    max_silent_secs    INTEGER,
    is_fixed_output    INTEGER NOT NULL DEFAULT 0,
    prefer_local_build INTEGER NOT NULL DEFAULT 0,
    allow_substitutes  INTEGER NOT NULL DEFAULT 1,
    pname              TEXT NOT NULL DEFAULT '',
    created_at         INTEGER NOT NULL
);

CREATE TABLE derivation_dependency (
    derivation_id TEXT NOT NULL REFERENCES derivation(id) ON DELETE CASCADE,
    depends_on_id TEXT NOT NULL REFERENCES derivation(id) ON DELETE CASCADE,
    PRIMARY KEY (derivation_id, depends_on_id)
);
CREATE INDEX derivation_dependency_by_dependency ON derivation_dependency(depends_on_id);

CREATE TABLE cached_path (
    id              TEXT PRIMARY KEY,
    store_hash      TEXT NOT NULL UNIQUE,
    store_path      TEXT NOT NULL,
    nar_hash        TEXT NOT NULL,
    nar_size        INTEGER NOT NULL,
    file_hash       TEXT,
    file_size       INTEGER,
    path_references TEXT NOT NULL DEFAULT '[]',
    deriver         TEXT,
    ca              TEXT,
    created_at      INTEGER NOT NULL,
    last_fetched_at INTEGER
);
CREATE INDEX cached_path_by_path ON cached_path(store_path);

CREATE TABLE cached_path_signature (
    cached_path_id TEXT NOT NULL REFERENCES cached_path(id) ON DELETE CASCADE,
    cache_id       TEXT NOT NULL REFERENCES cache(id) ON DELETE CASCADE,
    signature      TEXT,
    PRIMARY KEY (cached_path_id, cache_id)
);

CREATE TABLE derivation_output (
    derivation_id  TEXT NOT NULL REFERENCES derivation(id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    path           TEXT NOT NULL,
    is_cached      INTEGER NOT NULL DEFAULT 0,
    cached_path_id TEXT REFERENCES cached_path(id) ON DELETE SET NULL,
    PRIMARY KEY (derivation_id, name)
);
CREATE INDEX derivation_output_by_path ON derivation_output(path);

CREATE TABLE entry_point (
    evaluation_id TEXT NOT NULL REFERENCES evaluation(id) ON DELETE CASCADE,
    attr          TEXT NOT NULL,
    derivation_id TEXT NOT NULL REFERENCES derivation(id),
    PRIMARY KEY (evaluation_id, attr)
);

-- One build per derivation, shared by every evaluation that needs it (build_job).
-- attempt counts attempts used (transient failures); not_before holds a FailedTransient
-- build back until its backoff passed.
CREATE TABLE build (
    id                 TEXT PRIMARY KEY,
    derivation_id      TEXT NOT NULL UNIQUE REFERENCES derivation(id),
    status             INTEGER NOT NULL CHECK (status BETWEEN 0 AND 9),
    attempt            INTEGER NOT NULL DEFAULT 0,
    substituted        INTEGER NOT NULL DEFAULT 0,
    lost_worker_streak INTEGER NOT NULL DEFAULT 0,
    inputs_loops       INTEGER NOT NULL DEFAULT 0,
    timeout_secs       INTEGER,
    max_silent_secs    INTEGER,
    not_before         INTEGER,
    queued_at          INTEGER,
    dispatched_at      INTEGER,
    updated_at         INTEGER NOT NULL
);
-- The candidate scan of gradient-server §6.1: startable builds in job-ID order.
CREATE INDEX build_startable ON build(id) WHERE status IN (1, 8);

CREATE TABLE build_job (
    evaluation_id TEXT NOT NULL REFERENCES evaluation(id) ON DELETE CASCADE,
    build_id      TEXT NOT NULL REFERENCES build(id) ON DELETE CASCADE,
    PRIMARY KEY (evaluation_id, build_id)
);
CREATE INDEX build_job_by_build ON build_job(build_id);

-- The assignment. kind: eval 0, build 1; exactly one of evaluation_id and build_id is set.
-- The partial unique indexes are the claim: one open assignment per job.
CREATE TABLE dispatched_job (
    id            TEXT PRIMARY KEY,
    kind          INTEGER NOT NULL CHECK (kind IN (0, 1)),
    job_id        TEXT NOT NULL,
    evaluation_id TEXT REFERENCES evaluation(id) ON DELETE CASCADE,
    build_id      TEXT REFERENCES build(id) ON DELETE CASCADE,
    worker_id     TEXT NOT NULL,
    dispatched_at INTEGER NOT NULL,
    finished_at   INTEGER,
    outcome       TEXT CHECK (outcome IN ('completed', 'failed', 'abandoned', 'declined')),
    CHECK ((kind = 0) = (evaluation_id IS NOT NULL) AND (kind = 1) = (build_id IS NOT NULL)),
    CHECK ((finished_at IS NULL) = (outcome IS NULL))
);
CREATE UNIQUE INDEX dispatched_job_open_eval ON dispatched_job(evaluation_id) WHERE finished_at IS NULL;
CREATE UNIQUE INDEX dispatched_job_open_build ON dispatched_job(build_id) WHERE finished_at IS NULL;
CREATE INDEX dispatched_job_open_by_worker ON dispatched_job(worker_id) WHERE finished_at IS NULL;

-- log_ref: logs live in build_log_chunk, keyed by the attempt and each chunk's byte offset.
CREATE TABLE build_attempt (
    id             TEXT PRIMARY KEY,
    build_id       TEXT NOT NULL REFERENCES build(id) ON DELETE CASCADE,
    assignment_id  TEXT NOT NULL UNIQUE REFERENCES dispatched_job(id) ON DELETE CASCADE,
    worker_id      TEXT NOT NULL,
    outcome        INTEGER NOT NULL CHECK (outcome BETWEEN 0 AND 4),
    failure_reason TEXT,
    started_at     INTEGER NOT NULL,
    finished_at    INTEGER,
    log_bytes      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX build_attempt_by_build ON build_attempt(build_id, started_at);
CREATE INDEX build_attempt_running ON build_attempt(id) WHERE outcome = 0;

CREATE TABLE build_log_chunk (
    attempt_id  TEXT NOT NULL REFERENCES build_attempt(id) ON DELETE CASCADE,
    byte_offset INTEGER NOT NULL,
    data        BLOB NOT NULL,
    PRIMARY KEY (attempt_id, byte_offset)
);
