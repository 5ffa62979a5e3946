package store

import "time"

// NewEvaluation queues an evaluation of a project at a commit.
type NewEvaluation struct {
	ProjectID, Commit string
	Branch            string   // the branch (or full ref) the commit was the head of; "" when unknown
	Wildcards         []string // nil = the project's
}

// Evaluation is an evaluation row.
type Evaluation struct {
	ID, ProjectID, Commit string
	Branch                string // gradient-server §11.4; "" for a commit started by hash
	Wildcards             []string
	Status                EvaluationStatus
	FlakeSource           string // store path of the fetched source, "" until FetchResult
	Attempts              int    // flake-job transient failures so far
	EvalDispatches        int    // times the flake job was claimed
	CreatedAt, UpdatedAt  time.Time
}

// Message is an evaluation message (EvalMessage, EvalResult warnings and errors).
type Message struct {
	Level     MessageLevel
	Source    string
	Text      string
	CreatedAt time.Time // set by the store
}

// Derivation is one DiscoveredDerivation of an EvalResult batch.
type Derivation struct {
	DrvPath          string
	Attr             string // non-empty for entry points
	System           string // "builtin" runs anywhere
	RequiredFeatures []string
	Outputs          []Output
	Dependencies     []string // .drv paths, possibly described in a later batch
	TimeoutSecs      *uint64  // the derivation's own timeout; nil = server default
	MaxSilentSecs    *uint64
	IsFixedOutput    bool
	PreferLocalBuild bool
	AllowSubstitutes bool
	Pname            string
}

// Output is one named output path.
type Output struct {
	Name, Path string
}

// EvalBatch is one JobUpdate EvalResult of a flake job.
type EvalBatch struct {
	AssignmentID string
	Derivations  []Derivation
	Warnings     []string // stored as Warning messages, source "eval"
	Errors       []string // stored as Error messages, source "eval"
}

// CandidateQuery asks for the startable jobs of one kind a worker may run
// (gradient-server §6.1).
type CandidateQuery struct {
	Kind JobKind
	// Projects the worker authenticated for; a job qualifies when one of its evaluations
	// belongs to one of them. Empty = nothing qualifies.
	Projects []string
	// Systems and Features (builds only): a build qualifies when its system is one of
	// Systems (or is "builtin") and its required features are a subset of Features.
	Systems, Features []string
	Limit             int // at most this many, oldest job ID first; <= 0 means 3
}

// Candidate is a startable job, in assignment order (no scoring, smaller job ID first;
// gradient-server §10.13).
type Candidate struct {
	Job              JobRef
	System           string   // builds only
	RequiredFeatures []string // builds only
}

// Assignment is a claimed job: the dispatched_job row (its ID is the wire assignment_id)
// with what AssignJob needs. Exactly one of Eval and Build is set.
type Assignment struct {
	ID           string
	Job          JobRef
	WorkerID     string
	DispatchedAt time.Time
	Eval         *EvalAssignment
	Build        *BuildAssignment
}

// EvalAssignment is what a flake job needs.
type EvalAssignment struct {
	EvaluationID, ProjectID, RepoURL, Branch, Commit string
	Wildcards                                        []string
	FlakeSource                                      string // "" = not fetched yet
	SSHKeyEnc                                        []byte
}

// BuildAssignment is what a build job's one BuildSpec needs. TimeoutSecs and MaxSilentSecs
// are the derivation's own; nil means the server default applies.
type BuildAssignment struct {
	BuildID, DrvPath, System string
	RequiredFeatures         []string
	Outputs                  []Output
	IsFixedOutput            bool
	PreferLocalBuild         bool
	AllowSubstitutes         bool
	TimeoutSecs              *uint64
	MaxSilentSecs            *uint64
	Attempt                  int // attempts used so far
}

// BuildFailure is a build job's JobFailed.
type BuildFailure struct {
	Kind   FailureKind
	Reason string
	// MissingPaths (InputsUnavailable): the store paths the worker could not pull.
	MissingPaths []string
}

// Effects is what a state change did, for the server to act on.
type Effects struct {
	// Startable: builds that became Queued; offer them at once.
	Startable []JobRef
	// Requeued: jobs that went back to the queue (retry, cancel, lost worker, decline).
	Requeued []JobRef
	// Builds: every build whose status changed, in the order applied.
	Builds []BuildChange
	// Settled: evaluations that reached a terminal status.
	Settled []SettledEvaluation
	// Closed: open assignments this change closed while a worker may still run them; send
	// AbortJob{job_id} for each (gradient-server §6.5).
	Closed []OpenAssignment
	// Demoted: store hashes whose cached_path rows were deleted; delete their NAR objects.
	Demoted []string
}

// BuildChange is one build status change.
type BuildChange struct {
	BuildID   string
	Status    BuildStatus
	NotBefore time.Time // FailedTransient: retry not before this
}

// SettledEvaluation is an evaluation that reached a terminal status.
type SettledEvaluation struct {
	EvaluationID string
	Status       EvaluationStatus
}

// OpenAssignment names an assignment a worker holds.
type OpenAssignment struct {
	AssignmentID string
	Job          JobRef
	WorkerID     string
}

// Attempt is a build_attempt row. Its log is stored in the database as appended chunks
// (ReadBuildLog); LogBytes is its length.
type Attempt struct {
	ID, BuildID, AssignmentID, WorkerID string
	Outcome                             AttemptOutcome
	FailureReason                       string
	StartedAt, FinishedAt               time.Time
	LogBytes                            int64
}

// BuildInfo is a build for the API's read models.
type BuildInfo struct {
	ID, DerivationID, DrvPath, System, Pname string
	Status                                   BuildStatus
	Attempt, LostWorkerStreak                int
	Substituted                              bool
	NotBefore, QueuedAt, DispatchedAt        time.Time
	UpdatedAt                                time.Time
	EntryPoints                              []string // this evaluation's attrs (EvaluationBuilds)
}

// Recovery counts what RecoverInterruptedWork changed.
type Recovery struct {
	Assignments, Attempts, Builds, Evaluations int
}

// CachedPath is a cached_path row (gradient-protocol §7.3). FileHash "" means the bytes
// are not fully stored: such a row is never reported as cached.
type CachedPath struct {
	StorePath     string
	StoreHash     string // derived from StorePath
	NarHash       string
	NarSize       int64
	FileHash      string
	FileSize      int64
	References    []string // hash-name form
	Deriver, CA   string
	CreatedAt     time.Time
	LastFetchedAt time.Time
	Signatures    []Signature // of the caches asked about
}

// Signature is a cache's narinfo signature of a path ("key:base64"); "" until signed.
type Signature struct {
	CacheID, Signature string
}
