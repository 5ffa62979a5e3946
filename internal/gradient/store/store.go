package store

import (
	"context"
	"time"
)

// Store is gradient's persistent state. Every method takes a context, runs in one
// transaction, and wraps the sentinel errors of errors.go. Implementations are safe for
// concurrent use by any number of sessions and servers sharing the database.
type Store interface {
	Admin
	Handshake
	Workers
	Evaluations
	Dispatch
	Builds
	CachedPaths
	Reads
	Triggers
	RepoCredentials
	Retention
	Statuses
	Upstreams
	WebUI
	// RecoverInterruptedWork runs gradient-server §6.6 in one transaction, before the first
	// session: open assignments close as abandoned, running attempts become Aborted,
	// Building builds and interrupted evaluations (Fetching, EvaluatingFlake,
	// EvaluatingDerivation, Waiting) go back to Queued. It assumes no other server uses the
	// database at that moment.
	RecoverInterruptedWork(ctx context.Context) (Recovery, error)
	// Close releases the database.
	Close() error
}

// Admin is the administration API's writes (projects, caches, teams, keys, registrations).
type Admin interface {
	// CreateProject adds a project; ErrConflict when the name is taken.
	CreateProject(ctx context.Context, p NewProject) (Project, error)
	// CreateCache adds a cache; ErrConflict when the name is taken.
	CreateCache(ctx context.Context, c NewCache) (Cache, error)
	// SubscribeCache subscribes a project to a cache (idempotent); ErrNotFound for either ID.
	SubscribeCache(ctx context.Context, projectID, cacheID string) error
	// UnsubscribeCache removes the subscription; ErrNotFound when there was none.
	UnsubscribeCache(ctx context.Context, projectID, cacheID string) error
	// CreateTeam adds a team; ErrConflict when the name is taken.
	CreateTeam(ctx context.Context, name string) (Team, error)
	// SetTeamGrant creates or replaces a project's grant of a team's workers.
	SetTeamGrant(ctx context.Context, g TeamGrant) error
	// CreateAPIKey stores a key hash; ErrConflict for a duplicate hash, ErrNotFound for an
	// unknown cache pin.
	CreateAPIKey(ctx context.Context, k NewAPIKey) (APIKey, error)
	// BootstrapAPIKey stores the first key, atomically; ErrAlreadyBootstrapped when any key
	// (even revoked) exists.
	BootstrapAPIKey(ctx context.Context, k NewAPIKey) (APIKey, error)
	// RevokeAPIKey stamps revoked_at; ErrNotFound when unknown or already revoked.
	RevokeAPIKey(ctx context.Context, id string) error
	// CreateRegistration registers a worker ID for a project or cache. ErrNotFound when the
	// peer ID names neither, ErrConflict for a duplicate (peer, worker), ErrWorkerIDTaken
	// when a team worker holds the ID. New registrations are active.
	CreateRegistration(ctx context.Context, r NewRegistration) (Registration, error)
	// SetRegistrationActive (de)activates the registration of (peerID, workerID).
	SetRegistrationActive(ctx context.Context, peerID, workerID string, active bool) error
	// CreateTeamWorker registers a worker ID on a team. ErrConflict when the ID already is a
	// team worker, ErrWorkerIDTaken when a registration uses it.
	CreateTeamWorker(ctx context.Context, w NewTeamWorker) (TeamWorkerRow, error)
	// SetTeamWorkerEnabled turns a team worker on or off.
	SetTeamWorkerEnabled(ctx context.Context, workerID string, enabled bool) error
}

// Handshake answers the session package's needs (gradient-protocol §4.4).
type Handshake interface {
	// WorkerIdentity reads every registration of the ID (active or not, with peer kind,
	// enable flags, cache subscription, dial token) or its team worker with the granting
	// projects, plus the token hashes. An unknown ID yields empty facts, not an error.
	WorkerIdentity(ctx context.Context, workerID string) (WorkerIdentity, error)
	// DialTargets lists the workers with a URL and the encrypted tokens to present: active
	// registrations with a stored token, and enabled team workers with one.
	DialTargets(ctx context.Context) ([]DialTarget, error)
}

// Workers keeps the worker table (UI, liveness).
type Workers interface {
	// MarkWorkerConnected upserts the worker: last_connected_at = last_seen_at = at, offline
	// reason cleared.
	MarkWorkerConnected(ctx context.Context, workerID string, at time.Time) error
	// MarkWorkerSeen stamps last_seen_at (the server may batch these).
	MarkWorkerSeen(ctx context.Context, workerID string, at time.Time) error
	// SetWorkerCapabilities stores the latest WorkerCapabilities as JSON.
	SetWorkerCapabilities(ctx context.Context, workerID string, capabilitiesJSON []byte) error
	// MarkWorkerOffline records the last failure reason (gradient-protocol §4.4
	// bookkeeping). Call it only for registered IDs so unknown IDs cannot fill the table.
	MarkWorkerOffline(ctx context.Context, workerID, reason string) error
}

// Evaluations covers the flake job (gradient-server §6.2) and evaluation lifecycle.
type Evaluations interface {
	// CreateEvaluation queues an evaluation (Queued); ErrNotFound for an unknown project.
	CreateEvaluation(ctx context.Context, e NewEvaluation) (Evaluation, error)
	// SetEvaluationPhase applies a JobUpdate phase: Fetching, EvaluatingFlake or
	// EvaluatingDerivation (ErrInvalid otherwise).
	SetEvaluationPhase(ctx context.Context, assignmentID string, phase EvaluationStatus) error
	// RecordFlakeSource stores FetchResult's store path.
	RecordFlakeSource(ctx context.Context, assignmentID, storePath string) error
	// AddEvaluationMessages appends messages (EvalMessage) to the evaluation.
	AddEvaluationMessages(ctx context.Context, evaluationID string, msgs []Message) error
	// AddEvalResult stores one EvalResult batch: derivations (stubs for dependencies not yet
	// described), outputs, edges, entry points, one shared build per derivation linked to
	// the evaluation with its whole known closure. New builds start Created; those whose
	// dependencies all succeeded become Queued (Effects.Startable), those needing a failed
	// build become DependencyFailed, and Aborted builds it needs are revived.
	AddEvalResult(ctx context.Context, b EvalBatch) (Effects, error)
	// KnownDerivations answers QueryKnownDerivations: the paths described with a complete
	// closure (no undescribed dependency anywhere below).
	KnownDerivations(ctx context.Context, drvPaths []string) ([]string, error)
	// CompleteEvaluationJob applies JobCompleted of a flake job: the evaluation moves to
	// Building and settles at once when none of its builds can still run.
	CompleteEvaluationJob(ctx context.Context, assignmentID string) (Effects, error)
	// FailEvaluationJob applies JobFailed of a flake job: Transient, CorruptEvalCache and
	// InputsUnavailable re-queue and count an attempt (Failed after Policy.MaxEvalAttempts),
	// Canceled and SubstituteUnavailable re-queue without one, Aborted aborts the evaluation
	// as AbortEvaluation does, Permanent and Timeout fail it.
	FailEvaluationJob(ctx context.Context, assignmentID string, f BuildFailure) (Effects, error)
	// AbortEvaluation aborts a non-terminal evaluation and every unfinished build no other
	// unfinished evaluation needs; Effects.Closed lists the assignments to send AbortJob.
	AbortEvaluation(ctx context.Context, evaluationID, reason string) (Effects, error)
}

// Dispatch is the pull-only assignment of gradient-server §6.1.
type Dispatch interface {
	// Candidates lists startable jobs of one kind the worker may run, FIFO by job ID.
	Candidates(ctx context.Context, q CandidateQuery) ([]Candidate, error)
	// Claim inserts the assignment row for the job atomically: exactly one concurrent
	// claimer wins; the others get ErrLostRace. A claimed build becomes Building; a claimed
	// evaluation stays Queued with an open assignment and counts a dispatch.
	Claim(ctx context.Context, job JobRef, workerID string) (Assignment, error)
	// DeclineAssignment applies AssignJobResponse{accepted:false}: the assignment closes as
	// declined and the job is queued again without using an attempt.
	DeclineAssignment(ctx context.Context, assignmentID string) (Effects, error)
	// AbandonWorker applies a lost worker (gradient-server §6.5) to every open assignment of
	// the worker: assignments close as abandoned, running attempts become Aborted
	// ("WorkerLost"), builds go back to Queued (FailedPermanent after Policy.LostWorkerLimit
	// losses in a row), evaluations back to Queued (Failed after Policy.MaxEvalDispatches
	// dispatches). Call it when the session ends, before releasing the worker ID's session
	// slot.
	AbandonWorker(ctx context.Context, workerID, reason string) (Effects, error)
}

// Builds covers the build job's reports (gradient-server §6.3, gradient-server §6.4).
type Builds interface {
	// StartBuildAttempt opens the attempt of a build assignment (JobUpdate Building);
	// idempotent per assignment.
	StartBuildAttempt(ctx context.Context, assignmentID string) (Attempt, error)
	// AppendBuildLog appends a LogChunk to the assignment's attempt (opening it if needed);
	// ErrLogLimit past Policy.MaxLogBytes.
	AppendBuildLog(ctx context.Context, assignmentID string, data []byte) error
	// AppendBuildLogChunk is AppendBuildLog answering where the bytes went, for live
	// followers of the log (gradient-server §16).
	AppendBuildLogChunk(ctx context.Context, assignmentID string, data []byte) (LogAppend, error)
	// CompleteBuild applies JobCompleted: Completed (or Substituted), attempt Built (or
	// Substituted); dependents whose dependencies all succeeded become startable.
	CompleteBuild(ctx context.Context, assignmentID string, substituted bool) (Effects, error)
	// FailBuild applies JobFailed per gradient-server §6.4 (see FailureKind).
	FailBuild(ctx context.Context, assignmentID string, f BuildFailure) (Effects, error)
	// AbortBuild aborts one unfinished build (no cascade); its evaluations settle.
	AbortBuild(ctx context.Context, buildID, reason string) (Effects, error)
}

// CachedPaths is the cached_path model (gradient-protocol §7).
type CachedPaths interface {
	// PutCachedPath records a path's metadata and makes it visible through cacheIDs. A path
	// with FileHash set is complete: record it only after its bytes are stored
	// (gradient-protocol §7.3). A path with FileHash "" is pending (bytes not confirmed yet,
	// e.g. a presigned upload) and is never reported cached; a pending put never clears a
	// recorded FileHash.
	PutCachedPath(ctx context.Context, p CachedPath, cacheIDs []string) error
	// SignCachedPath sets a cache's signature of a stored path.
	SignCachedPath(ctx context.Context, storeHash, cacheID, signature string) error
	// LookupCachedPaths returns, keyed by store path, the paths among storePaths that are
	// fully stored and visible through one of cacheIDs, with those caches' signatures. At
	// most 1000 paths per call (gradient-protocol §7.2). Absent = not cached.
	LookupCachedPaths(ctx context.Context, cacheIDs, storePaths []string) (map[string]CachedPath, error)
	// CachedPathByHash returns the fully stored path with this store hash when cacheID holds
	// it, with that cache's signature if it has one (a narinfo request names only the hash).
	// ErrNotFound otherwise.
	CachedPathByHash(ctx context.Context, cacheID, storeHash string) (CachedPath, error)
	// CachedPathByFileHash returns a fully stored path of cacheID whose compressed bytes
	// hash to fileHash, in the form recorded ("sha256:<nix32>"); any one of them when
	// several paths share the bytes. ErrNotFound otherwise.
	CachedPathByFileHash(ctx context.Context, cacheID, fileHash string) (CachedPath, error)
	// CachesOfProjects lists the caches the projects subscribe to: what a worker's session
	// may read and push to.
	CachesOfProjects(ctx context.Context, projectIDs []string) ([]string, error)
	// DemoteCachedPath deletes a stale row (NarUnavailable, InputsUnavailable).
	DemoteCachedPath(ctx context.Context, storeHash string) error
	// MarkFetched stamps last_fetched_at.
	MarkFetched(ctx context.Context, storeHash string) error
}

// Reads are the API's read models.
type Reads interface {
	GetProject(ctx context.Context, id string) (Project, error)
	ProjectByName(ctx context.Context, name string) (Project, error)
	ListProjects(ctx context.Context) ([]Project, error)
	GetCache(ctx context.Context, id string) (Cache, error)
	CacheByName(ctx context.Context, name string) (Cache, error)
	ListCaches(ctx context.Context) ([]Cache, error)
	// LookupAPIKey finds an active key by hash; ErrNotFound when unknown or revoked.
	LookupAPIKey(ctx context.Context, keyHash string) (APIKey, error)
	ListAPIKeys(ctx context.Context) ([]APIKey, error)
	// ListRegistrations lists registrations, of one worker ID when workerID is non-empty.
	ListRegistrations(ctx context.Context, workerID string) ([]Registration, error)
	ListTeamWorkers(ctx context.Context, teamID string) ([]TeamWorkerRow, error)
	// ListTeams lists every team, by name.
	ListTeams(ctx context.Context) ([]Team, error)
	// ListTeamGrants lists the grants of one team ("" = every team's), revoked ones
	// (Workers false) included.
	ListTeamGrants(ctx context.Context, teamID string) ([]TeamGrant, error)
	// ListWorkers lists every registered or seen worker ID.
	ListWorkers(ctx context.Context) ([]WorkerInfo, error)
	GetEvaluation(ctx context.Context, id string) (Evaluation, error)
	// ListEvaluations lists a project's evaluations, newest first, at most limit (<= 0: 100).
	ListEvaluations(ctx context.Context, projectID string, limit int) ([]Evaluation, error)
	EvaluationMessages(ctx context.Context, evaluationID string) ([]Message, error)
	// EvaluationBuilds lists the builds an evaluation needs, with its entry-point attrs.
	EvaluationBuilds(ctx context.Context, evaluationID string) ([]BuildInfo, error)
	GetBuild(ctx context.Context, id string) (BuildInfo, error)
	// BuildAttempts lists a build's attempts, oldest first.
	BuildAttempts(ctx context.Context, buildID string) ([]Attempt, error)
	// ReadBuildLog returns up to max bytes of an attempt's log from offset (empty at EOF).
	ReadBuildLog(ctx context.Context, attemptID string, offset int64, max int) ([]byte, error)
	// OpenAssignments lists a worker's open assignments ("" = all workers).
	OpenAssignments(ctx context.Context, workerID string) ([]OpenAssignment, error)
	// ListCachedPaths lists the fully stored paths a cache holds, newest first, at most
	// limit (<= 0: 100; capped at 1000), without signatures.
	ListCachedPaths(ctx context.Context, cacheID string, limit int) ([]CachedPath, error)
}
