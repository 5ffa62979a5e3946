package wire

// Server → worker messages (gradient-protocol §3.2). "Control lane" and "bulk lane" name the
// writer lane each rides (gradient-protocol §1.5, see Lane).

// AuthChallenge lists the peers that registered this worker ID. Control lane.
type AuthChallenge struct {
	Peers []string
}

// InitAck accepts the handshake with the negotiated capabilities. Control lane.
type InitAck struct {
	Capabilities    GradientCapabilities
	AuthorizedPeers []string
	FailedPeers     []FailedPeer
}

// AuthUpdate is the result of a reauth. Control lane.
type AuthUpdate struct {
	AuthorizedPeers []string
	FailedPeers     []FailedPeer
}

// ServerReject is ServerMessage::Reject: a refusal, followed by a close. Control lane.
type ServerReject struct {
	Code   uint16
	Reason string
}

// ServerError is ServerMessage::Error: a protocol error such as 400 malformed message. It is
// a message, not a Go error. Control lane.
type ServerError struct {
	Code    uint16
	Message string
}

// ServerDraining is ServerMessage::Draining: the server is shutting down; it ends the
// session, never the worker process. Control lane.
type ServerDraining struct{}

// JobListChunk is one page of the answer to RequestJobList; the last page has IsFinal.
// Control lane.
type JobListChunk struct {
	Candidates []JobCandidate
	IsFinal    bool
}

// JobOffer carries new candidates not yet sent to this worker. Control lane.
type JobOffer struct {
	Candidates []JobCandidate
}

// AssignJob assigns a job; a re-sent assignment for a running job replaces its AssignmentID.
// Control lane.
type AssignJob struct {
	JobID        string
	AssignmentID string
	Job          Job
	Cluster      Option[ClusterMembership]
}

// AbortJob cancels a job. Control lane.
type AbortJob struct {
	JobID  string
	Reason string
}

// StartCluster starts a cluster job attempt. Control lane.
type StartCluster struct {
	Attempt string
	Roster  []ClusterPeer
}

// ServerClusterSignal is ServerMessage::ClusterSignal, for cluster jobs. Control lane.
type ServerClusterSignal struct {
	Attempt string
	From    ClusterAddress
	Payload []byte
}

// AbortCluster ends a cluster job attempt. Control lane.
type AbortCluster struct {
	Attempt string
	Reason  string
}

// Credential carries an SSH key, sent right before the AssignJob it belongs to. Secret: its
// String and LogValue redact Data. Control lane.
type Credential struct {
	Kind CredentialKind
	Data []byte
}

// NarPush is one chunk of a pulled NAR (zstd). Data aliases the frame after decoding. Bulk
// lane.
type NarPush struct {
	JobID     string
	StorePath string
	Data      []byte
	Offset    uint64
	IsFinal   bool
}

// NarUnavailable says the object is not in storage; no chunks follow. Bulk lane.
type NarUnavailable struct {
	JobID     string
	StorePath string
	Reason    string
}

// NarAbort reports a storage error or timeout before or during a stream; retryable. Bulk lane.
type NarAbort struct {
	JobID     string
	StorePath string
	Reason    string
}

// NarStreamHeader opens a pull stream. Bulk lane.
type NarStreamHeader struct {
	JobID       string
	StorePath   string
	TotalBytes  uint64
	StreamToken string
}

// EvalCachePullResult answers EvalCachePull. Bulk lane.
type EvalCachePullResult struct {
	JobID   string
	Outcome EvalCachePullOutcome
}

// EvalCacheChunk carries inline eval-cache bytes. Data aliases the frame after decoding. Bulk
// lane.
type EvalCacheChunk struct {
	JobID   string
	Data    []byte
	Offset  uint64
	IsFinal bool
}

// CacheStatus answers CacheQuery. Control lane.
type CacheStatus struct {
	QueryID string
	Cached  []CachedPath
}

// KnownDerivations answers QueryKnownDerivations. Control lane.
type KnownDerivations struct {
	QueryID string
	Known   []string
}

// CacheError says the cache state could not be determined; the worker retries and must not
// read it as "uncached". A message, not a Go error. Control lane.
type CacheError struct {
	QueryID string
	Message string
}

// UploadGrant admits (or skips) an upload. Control lane.
type UploadGrant struct {
	RequestID uint64
	Target    GrantTarget
}

// UploadCommitted reports an upload's result. Control lane.
type UploadCommitted struct {
	RequestID uint64
	Outcome   UploadOutcome
}

// Authenticate is the first message of a server-dialed session. Secret: its String and
// LogValue redact the tokens. Control lane.
type Authenticate struct {
	WorkerID string
	Tokens   []PeerToken
}

// Handover (protocols 29–30 only; removed in 31) says a shared worker changes hands; a new ID
// wipes its eval cache. Control lane.
type Handover struct {
	ID string
}

func (*AuthChallenge) isMessage()       {}
func (*InitAck) isMessage()             {}
func (*AuthUpdate) isMessage()          {}
func (*ServerReject) isMessage()        {}
func (*ServerError) isMessage()         {}
func (*ServerDraining) isMessage()      {}
func (*JobListChunk) isMessage()        {}
func (*JobOffer) isMessage()            {}
func (*AssignJob) isMessage()           {}
func (*AbortJob) isMessage()            {}
func (*StartCluster) isMessage()        {}
func (*ServerClusterSignal) isMessage() {}
func (*AbortCluster) isMessage()        {}
func (*Credential) isMessage()          {}
func (*NarPush) isMessage()             {}
func (*NarUnavailable) isMessage()      {}
func (*NarAbort) isMessage()            {}
func (*NarStreamHeader) isMessage()     {}
func (*EvalCachePullResult) isMessage() {}
func (*EvalCacheChunk) isMessage()      {}
func (*CacheStatus) isMessage()         {}
func (*KnownDerivations) isMessage()    {}
func (*CacheError) isMessage()          {}
func (*UploadGrant) isMessage()         {}
func (*UploadCommitted) isMessage()     {}
func (*Authenticate) isMessage()        {}
func (*Handover) isMessage()            {}

func (*AuthChallenge) isServerMessage()       {}
func (*InitAck) isServerMessage()             {}
func (*AuthUpdate) isServerMessage()          {}
func (*ServerReject) isServerMessage()        {}
func (*ServerError) isServerMessage()         {}
func (*ServerDraining) isServerMessage()      {}
func (*JobListChunk) isServerMessage()        {}
func (*JobOffer) isServerMessage()            {}
func (*AssignJob) isServerMessage()           {}
func (*AbortJob) isServerMessage()            {}
func (*StartCluster) isServerMessage()        {}
func (*ServerClusterSignal) isServerMessage() {}
func (*AbortCluster) isServerMessage()        {}
func (*Credential) isServerMessage()          {}
func (*NarPush) isServerMessage()             {}
func (*NarUnavailable) isServerMessage()      {}
func (*NarAbort) isServerMessage()            {}
func (*NarStreamHeader) isServerMessage()     {}
func (*EvalCachePullResult) isServerMessage() {}
func (*EvalCacheChunk) isServerMessage()      {}
func (*CacheStatus) isServerMessage()         {}
func (*KnownDerivations) isServerMessage()    {}
func (*CacheError) isServerMessage()          {}
func (*UploadGrant) isServerMessage()         {}
func (*UploadCommitted) isServerMessage()     {}
func (*Authenticate) isServerMessage()        {}
func (*Handover) isServerMessage()            {}
