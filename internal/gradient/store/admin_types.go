package store

import (
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
)

// NewProject creates a project (a peer that grants jobs, gradient-protocol §4.2).
type NewProject struct {
	Name      string // unique
	RepoURL   string
	Branch    string
	Wildcards []string // attribute patterns evaluations use unless they name their own
	SSHKeyEnc []byte   // encrypted deploy key, nil for public repositories
	// ForceEvaluation: evaluate even when the commit was evaluated before (the server's
	// policy; stored here).
	ForceEvaluation bool
}

// Project is a project row. The SSH key is handed out only with an eval job (Claim).
type Project struct {
	ID, Name, RepoURL, Branch string
	Wildcards                 []string
	HasSSHKey                 bool
	ForceEvaluation           bool
	CreatedAt                 time.Time
}

// NewCache creates a binary cache.
type NewCache struct {
	Name          string // unique
	Public        bool
	SigningKeyEnc []byte // encrypted narinfo signing key
}

// Cache is a cache row.
type Cache struct {
	ID, Name      string
	Public        bool
	SigningKeyEnc []byte
	CreatedAt     time.Time
}

// Team owns team workers; projects grant its workers (gradient-protocol §4.2).
type Team struct {
	ID, Name  string
	CreatedAt time.Time
}

// TeamGrant lets a project use (Workers) a team's workers.
type TeamGrant struct {
	TeamID, ProjectID string
	Workers           bool
}

// NewAPIKey stores an API key by hash; the server hashes (SHA-256 hex of the part after
// "GRAD") and never hands the store the key.
type NewAPIKey struct {
	Owner   string
	KeyHash string // lowercase SHA-256 hex, unique
	CacheID string // "" = not pinned; otherwise the key only reads this cache
}

// APIKey is an api_key row.
type APIKey struct {
	ID, Owner, KeyHash, CacheID string
	CreatedAt                   time.Time
	RevokedAt                   time.Time // zero while active
}

// NewRegistration registers a worker ID for a peer (a project or cache ID).
type NewRegistration struct {
	PeerID, WorkerID string
	// TokenHash is the argon2id PHC string or legacy lowercase SHA-256 hex
	// (gradient-protocol §4.2).
	TokenHash string
	// TokenEnc and URL are set for server-dialed workers: the encrypted plaintext token the
	// server presents, and the worker's URL. Both or neither.
	TokenEnc                             []byte
	URL                                  string
	EnableFetch, EnableEval, EnableBuild bool
	DisplayName                          string
}

// Registration is a worker_registration row.
type Registration struct {
	ID, PeerID, WorkerID                 string
	PeerKind                             session.PeerKind
	Active                               bool
	EnableFetch, EnableEval, EnableBuild bool
	DisplayName, URL                     string
	HasDialToken                         bool
	CreatedAt                            time.Time
}

// NewTeamWorker registers a worker ID on a team.
type NewTeamWorker struct {
	TeamID, WorkerID, TokenHash string
	TokenEnc                    []byte
	URL                         string
	Enabled                     bool
}

// TeamWorkerRow is a team_worker row.
type TeamWorkerRow struct {
	ID, TeamID, WorkerID, URL string
	Enabled, HasDialToken     bool
	CreatedAt                 time.Time
}

// WorkerIdentity is everything the handshake needs about one worker ID in one read
// (gradient-protocol §4.4): Facts maps 1:1 onto session.FactsAnswer, and TokenHashes holds
// the stored hash for each peer the challenge names (registrations by peer ID, a team
// worker by team ID) for the server to verify tokens against.
type WorkerIdentity struct {
	Facts       session.WorkerFacts
	TokenHashes map[string]string
}

// DialTarget is a worker the server dials (gradient-protocol §4.1 Dialer): its URL and the
// encrypted token of every active registration (or the team worker) stored for that URL.
type DialTarget struct {
	WorkerID, URL string
	Tokens        []DialToken
}

// DialToken is one (peer, encrypted token) pair the server sends in Authenticate.
type DialToken struct {
	PeerID   string
	TokenEnc []byte
}

// WorkerInfo is a worker for the API's worker list: the worker row joined with whether any
// registration or team worker names it. Live is the server's to overlay (sessions are in
// memory, gradient-server §9); the store reports the last stamps and the last failure
// reason.
type WorkerInfo struct {
	WorkerID        string
	DisplayName     string
	Registered      bool
	LastConnectedAt time.Time
	LastSeenAt      time.Time
	Capabilities    []byte // JSON as stored by SetWorkerCapabilities
	OfflineReason   string
}
