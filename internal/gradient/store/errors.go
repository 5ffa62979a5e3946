package store

import "errors"

// Sentinel errors callers branch on. Backends wrap them with context; test with errors.Is.
var (
	// ErrNotFound: the named row does not exist (or, for API keys, is revoked).
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a unique name or key is already taken (project or cache name, API key
	// hash, a (peer, worker) registration, a team worker's worker ID).
	ErrConflict = errors.New("store: already exists")
	// ErrWorkerIDTaken: the worker ID belongs to a team worker and a registration was asked
	// for it, or the reverse (gradient-protocol §4.2: one registration owner or one team
	// worker per ID).
	ErrWorkerIDTaken = errors.New("store: worker id belongs to another kind of owner")
	// ErrLostRace: Claim found the job claimed by someone else or no longer startable; try the
	// next candidate (gradient-server §6.1, up to 3 times).
	ErrLostRace = errors.New("store: job already claimed or no longer startable")
	// ErrStaleAssignment: the report names an assignment that is closed, unknown, or of the
	// other job kind; drop the report.
	ErrStaleAssignment = errors.New("store: assignment is not open")
	// ErrNoAttempt: a log chunk or outcome arrived for an assignment whose build attempt was
	// never opened and cannot be.
	ErrNoAttempt = errors.New("store: no open build attempt")
	// ErrLogLimit: the attempt's log reached Policy.MaxLogBytes; the chunk was not stored.
	ErrLogLimit = errors.New("store: build log limit reached")
	// ErrInvalid: an argument breaks a documented precondition (empty name, bad store path,
	// a phase that is not a flake-job phase, too many paths in one query).
	ErrInvalid = errors.New("store: invalid argument")
	// ErrAlreadyBootstrapped: BootstrapAPIKey found an existing key.
	ErrAlreadyBootstrapped = errors.New("store: an api key already exists")
)
