package api

import (
	"encoding/json"
	"time"
)

// The JSON shapes of /api/v1. Field names are snake_case; zero times are left out. The
// client package (apiclient) decodes exactly these types.

// Error is every error answer's body.
type Error struct {
	Message string `json:"error"`
	Code    string `json:"code"`
}

// Error codes (Error.Code), stable for clients to branch on.
const (
	CodeBadRequest     = "bad_request"
	CodeUnauthorized   = "unauthorized"
	CodeForbidden      = "forbidden"
	CodeNotFound       = "not_found"
	CodeMethod         = "method_not_allowed"
	CodeConflict       = "conflict"
	CodeWorkerIDTaken  = "worker_id_taken"
	CodeLastAdminKey   = "last_admin_key"
	CodeAlreadyDone    = "already_finished"
	CodeTooLarge       = "request_too_large"
	CodeNotImplemented = "not_implemented"
	CodeInternal       = "internal"
)

// CreateProjectRequest is POST /api/v1/projects.
type CreateProjectRequest struct {
	Name            string   `json:"name"`
	RepoURL         string   `json:"repo_url"`
	Branch          string   `json:"branch,omitempty"`
	Wildcards       []string `json:"wildcards"`
	ForceEvaluation bool     `json:"force_evaluation,omitempty"`
}

// Project is a project; Caches (subscribed cache names) only in GET /projects/{project}.
type Project struct {
	ID              string    `json:"id"`
	Name            string    `json:"name"`
	RepoURL         string    `json:"repo_url"`
	Branch          string    `json:"branch,omitempty"`
	Wildcards       []string  `json:"wildcards"`
	ForceEvaluation bool      `json:"force_evaluation"`
	HasSSHKey       bool      `json:"has_ssh_key"`
	Caches          []string  `json:"caches,omitempty"`
	CreatedAt       time.Time `json:"created_at,omitzero"`
	// Triggers are what the project follows (GET /projects/{project} only).
	Triggers *ProjectTriggers `json:"triggers,omitempty"`
}

// ProjectList is GET /api/v1/projects.
type ProjectList struct {
	Projects []Project `json:"projects"`
}

// CreateCacheRequest is POST /api/v1/caches.
type CreateCacheRequest struct {
	Name   string `json:"name"`
	Public bool   `json:"public"`
}

// Cache is a binary cache. The signing key never leaves the server.
type Cache struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Public        bool   `json:"public"`
	HasSigningKey bool   `json:"has_signing_key"`
	// PublicKey is the narinfo signing key's public half, "name:base64", for Nix's
	// trusted-public-keys.
	PublicKey string    `json:"public_key,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// CacheList is GET /api/v1/caches.
type CacheList struct {
	Caches []Cache `json:"caches"`
}

// CachePathList is GET /api/v1/caches/{cache}/paths: the stored paths, newest first.
type CachePathList struct {
	Cache string       `json:"cache"`
	Paths []CachedPath `json:"paths"`
}

// CachedPath is one store path a cache holds; the hashes are Nix's "sha256:<nix32>" form.
type CachedPath struct {
	StorePath  string    `json:"store_path"`
	NarHash    string    `json:"nar_hash"`
	NarSize    int64     `json:"nar_size"`
	FileHash   string    `json:"file_hash"`
	FileSize   int64     `json:"file_size"`
	References []string  `json:"references"`
	Deriver    string    `json:"deriver,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// RegisterWorkerRequest is POST /api/v1/{projects|caches}/{peer}/registrations. The enable
// flags default to true when left out.
type RegisterWorkerRequest struct {
	WorkerID    string `json:"worker_id"`
	URL         string `json:"url,omitempty"`
	EnableFetch *bool  `json:"enable_fetch,omitempty"`
	EnableEval  *bool  `json:"enable_eval,omitempty"`
	EnableBuild *bool  `json:"enable_build,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
}

// RegisterWorkerResponse carries the peer token, shown this once: only its argon2id hash is
// stored. PeersFileLine is the line for the worker's peers file; Warnings say what will keep
// the registration from working (a project without a cache).
type RegisterWorkerResponse struct {
	Registration  Registration `json:"registration"`
	Token         string       `json:"token"`
	PeersFileLine string       `json:"peers_file_line"`
	Warnings      []string     `json:"warnings,omitempty"`
}

// SetActiveRequest is PATCH /api/v1/{projects|caches}/{peer}/registrations/{worker}.
type SetActiveRequest struct {
	Active *bool `json:"active"`
}

// Registration is a worker registration (never with its token or hash).
type Registration struct {
	ID           string    `json:"id"`
	PeerID       string    `json:"peer_id"`
	PeerKind     string    `json:"peer_kind"` // project, cache or proxy
	PeerName     string    `json:"peer_name,omitempty"`
	WorkerID     string    `json:"worker_id"`
	Active       bool      `json:"active"`
	EnableFetch  bool      `json:"enable_fetch"`
	EnableEval   bool      `json:"enable_eval"`
	EnableBuild  bool      `json:"enable_build"`
	DisplayName  string    `json:"display_name,omitempty"`
	URL          string    `json:"url,omitempty"`
	HasDialToken bool      `json:"has_dial_token"`
	CreatedAt    time.Time `json:"created_at,omitzero"`
}

// RegistrationList is GET /api/v1/registrations.
type RegistrationList struct {
	Registrations []Registration `json:"registrations"`
}

// Worker statuses (Worker.Status).
const (
	WorkerLive    = "live"
	WorkerOffline = "offline"
)

// Worker is a worker ID as the server knows it: the stored row overlaid with its live
// session, if any. Capabilities are the session's negotiated ones (live only);
// ReportedCapabilities is the worker's last WorkerCapabilities as stored.
type Worker struct {
	WorkerID             string          `json:"worker_id"`
	DisplayName          string          `json:"display_name,omitempty"`
	Registered           bool            `json:"registered"`
	Status               string          `json:"status"`
	ConnectedAt          time.Time       `json:"connected_at,omitzero"`
	Remote               string          `json:"remote,omitempty"` // a live session's ip:port (or dialed URL)
	LastSeenAt           time.Time       `json:"last_seen_at,omitzero"`
	AuthorizedPeers      []string        `json:"authorized_peers,omitempty"`
	Capabilities         *Capabilities   `json:"capabilities,omitempty"`
	ReportedCapabilities json.RawMessage `json:"reported_capabilities,omitempty"`
	OfflineReason        string          `json:"offline_reason,omitempty"`
	Quarantined          string          `json:"quarantined,omitempty"`   // live: why it is not given the jobs it registered for
	Registrations        []Registration  `json:"registrations,omitempty"` // GET /workers/{worker} only
}

// Capabilities are a live session's negotiated capabilities (gradient-protocol §5).
type Capabilities struct {
	Core     bool `json:"core"`
	Federate bool `json:"federate"`
	Fetch    bool `json:"fetch"`
	Eval     bool `json:"eval"`
	Build    bool `json:"build"`
	Cache    bool `json:"cache"`
}

// WorkerList is GET /api/v1/workers.
type WorkerList struct {
	Workers []Worker `json:"workers"`
}

// CreateAPIKeyRequest is POST /api/v1/api-keys. Cache (ID or name) pins the key to reading
// that one cache.
type CreateAPIKeyRequest struct {
	Owner string `json:"owner"`
	Cache string `json:"cache,omitempty"`
}

// CreateAPIKeyResponse carries the key, shown this once: only its SHA-256 is stored.
type CreateAPIKeyResponse struct {
	APIKey APIKey `json:"api_key"`
	Key    string `json:"key"`
}

// APIKey is an API key's record (never the key or its hash).
type APIKey struct {
	ID        string    `json:"id"`
	Owner     string    `json:"owner"`
	CacheID   string    `json:"cache_id,omitempty"`
	Active    bool      `json:"active"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
}

// APIKeyList is GET /api/v1/api-keys.
type APIKeyList struct {
	APIKeys []APIKey `json:"api_keys"`
}

// StartEvaluationRequest is POST /api/v1/projects/{project}/evaluations. Wildcards left out
// means the project's.
type StartEvaluationRequest struct {
	Commit string `json:"commit"`
	// Branch, without Commit, is resolved to its head with git ls-remote (a branch, else a
	// tag); with Commit it is only recorded (gradient-server §11.5).
	Branch    string   `json:"branch,omitempty"`
	Wildcards []string `json:"wildcards,omitempty"`
}

// Evaluation is an evaluation; Status is the gradient-server §9 name, StatusCode its pinned
// number.
type Evaluation struct {
	ID             string    `json:"id"`
	ProjectID      string    `json:"project_id"`
	Commit         string    `json:"commit"`
	Branch         string    `json:"branch,omitempty"` // gradient-server §11.4
	Wildcards      []string  `json:"wildcards"`
	Status         string    `json:"status"`
	StatusCode     int       `json:"status_code"`
	FlakeSource    string    `json:"flake_source,omitempty"`
	Attempts       int       `json:"attempts"`
	EvalDispatches int       `json:"eval_dispatches"`
	CreatedAt      time.Time `json:"created_at,omitzero"`
	UpdatedAt      time.Time `json:"updated_at,omitzero"`
	// Waiting says what a Queued evaluation waits for (GET /evaluations/{id} only).
	Waiting string `json:"waiting,omitempty"`
}

// EvaluationList is GET /api/v1/projects/{project}/evaluations, newest first.
type EvaluationList struct {
	Evaluations []Evaluation `json:"evaluations"`
}

// EvaluationDetail is GET /api/v1/evaluations/{id}.
type EvaluationDetail struct {
	Evaluation Evaluation `json:"evaluation"`
	Builds     []Build    `json:"builds"`
	Messages   []Message  `json:"messages"`
	// Statuses are the commit statuses and webhook events of the evaluation, with their
	// delivery state (gradient-server §12).
	Statuses []StatusDelivery `json:"statuses,omitempty"`
}

// Message is an evaluation message.
type Message struct {
	Level     string    `json:"level"`
	Source    string    `json:"source"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// Build is a build (shared by every evaluation that needs its derivation).
type Build struct {
	ID               string    `json:"id"`
	DerivationID     string    `json:"derivation_id"`
	DrvPath          string    `json:"drv_path"`
	System           string    `json:"system"`
	Pname            string    `json:"pname,omitempty"`
	Status           string    `json:"status"`
	StatusCode       int       `json:"status_code"`
	Attempt          int       `json:"attempt"`
	LostWorkerStreak int       `json:"lost_worker_streak"`
	Substituted      bool      `json:"substituted"`
	EntryPoints      []string  `json:"entry_points,omitempty"`
	NotBefore        time.Time `json:"not_before,omitzero"`
	QueuedAt         time.Time `json:"queued_at,omitzero"`
	DispatchedAt     time.Time `json:"dispatched_at,omitzero"`
	UpdatedAt        time.Time `json:"updated_at,omitzero"`
	// Waiting says what a Queued build waits for (in an evaluation's detail only).
	Waiting string `json:"waiting,omitempty"`
}

// BuildDetail is GET /api/v1/builds/{id}.
type BuildDetail struct {
	Build    Build     `json:"build"`
	Attempts []Attempt `json:"attempts"`
}

// Attempt is one try of a build on a worker.
type Attempt struct {
	ID            string    `json:"id"`
	BuildID       string    `json:"build_id"`
	AssignmentID  string    `json:"assignment_id"`
	WorkerID      string    `json:"worker_id"`
	Outcome       string    `json:"outcome"`
	OutcomeCode   int       `json:"outcome_code"`
	FailureReason string    `json:"failure_reason,omitempty"`
	StartedAt     time.Time `json:"started_at,omitzero"`
	FinishedAt    time.Time `json:"finished_at,omitzero"`
	LogBytes      int64     `json:"log_bytes"`
}

// AbortRequest is POST /api/v1/{evaluations|builds}/{id}/abort.
type AbortRequest struct {
	Reason string `json:"reason,omitempty"`
}

// AbortResponse says what an abort did: the builds it aborted and the running jobs it
// stopped (AbortJob sent to their workers).
type AbortResponse struct {
	Evaluation        *Evaluation `json:"evaluation,omitempty"`
	Build             *Build      `json:"build,omitempty"`
	AbortedBuilds     int         `json:"aborted_builds"`
	StoppedJobs       int         `json:"stopped_jobs"`
	SettledEvaluation int         `json:"settled_evaluations"`
}

// Log response headers of GET /api/v1/builds/{id}/log.
const (
	HeaderAttempt    = "X-Gradient-Attempt"     // the attempt whose log this is
	HeaderLogSize    = "X-Gradient-Log-Size"    // the attempt's log length when read
	HeaderNextOffset = "X-Gradient-Next-Offset" // offset to ask for next
)
