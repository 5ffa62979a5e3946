package wire

// Worker → server messages (gradient-protocol §3.1). "Control lane" and "bulk lane" name the
// writer lane each rides (gradient-protocol §1.5, see Lane).

// InitConnection is the first message of a worker-dialed session and the answer to
// Authenticate; ID is the persistent worker UUID. Control lane.
type InitConnection struct {
	Capabilities GradientCapabilities
	ID           string
}

// AuthResponse carries one token per challenged peer the worker holds a token for. Secret:
// its String and LogValue redact the tokens. Control lane.
type AuthResponse struct {
	Tokens []PeerToken
}

// ReauthRequest asks for a new AuthChallenge, sent when the peers file changes. Control lane.
type ReauthRequest struct{}

// ClientReject is ClientMessage::Reject: a dialed worker refuses the server (400 or 401).
// Control lane.
type ClientReject struct {
	Code   uint16
	Reason string
}

// WorkerCapabilities is sent once after the handshake when build was negotiated and again
// whenever it changes; the newest replaces the old. Control lane.
type WorkerCapabilities struct {
	Architectures       []string
	SystemFeatures      []string
	MaxConcurrentBuilds uint32
	CPUCount            uint32
	RAMTotalMB          uint64
	CPUCoreScore        uint32
	Zone                Option[string]
	Endpoint            Option[string]
}

// WorkerMetrics is the 10 s load heartbeat. DownloadSpeedMbps appeared in protocol 28 with a
// fallback, so a v27 frame has four fields (gradient-protocol §2.2 test vector). Control
// lane.
type WorkerMetrics struct {
	CPUUsagePct       float32
	RAMFreeMB         uint64
	DiskSpeedMbps     Option[float32]
	UploadSpeedMbps   Option[float32]
	DownloadSpeedMbps Option[float32] `proto:"since=28,default"`
}

// RequestJobList asks for the full candidate list, answered by JobListChunk pages. Control lane.
type RequestJobList struct{}

// RequestJobChunk sends score updates for offered candidates. Control lane.
type RequestJobChunk struct {
	Scores  []CandidateScore
	IsFinal bool
}

// AssignJobResponse accepts or declines an AssignJob. Control lane.
type AssignJobResponse struct {
	JobID    string
	Accepted bool
	Reason   Option[string]
}

// JobUpdate reports a job's progress. Control lane.
type JobUpdate struct {
	JobID        string
	AssignmentID string
	Update       JobUpdateKind
}

// JobCompleted reports success. Bulk lane, so it queues behind the job's own log and upload
// bytes.
type JobCompleted struct {
	JobID        string
	AssignmentID string
	Spans        []JobPhaseSpan
	ElapsedMs    uint64
}

// JobFailed reports failure; MissingPaths is filled only for InputsUnavailable. Control lane.
type JobFailed struct {
	JobID        string
	AssignmentID string
	Error        string
	Kind         BuildFailureKind
	MissingPaths []string
	Spans        []JobPhaseSpan
	ElapsedMs    uint64
	Metrics      Option[BuildMetrics]
}

// ClientDraining is ClientMessage::Draining: the worker is stopping, assign it nothing more.
// Control lane.
type ClientDraining struct{}

// BuildProgress reports transfer progress, at most once a second plus a final report.
// Control lane.
type BuildProgress struct {
	JobID        string
	AssignmentID string
	BuildID      string
	Phase        BuildProgressPhase
	BytesDone    uint64
	BytesTotal   Option[uint64]
	PathsDone    uint32
	PathsTotal   Option[uint32]
}

// EvalProgress reports input download rows or the live thunk count, at most once a second,
// repeated unchanged every 30 s. Control lane.
type EvalProgress struct {
	JobID        string
	AssignmentID string
	Progress     EvalProgressKind
}

// LogChunk carries build log bytes, unacknowledged. TaskIndex indexes BuildJob.Builds (always
// 0). Data aliases the frame after decoding. Bulk lane.
type LogChunk struct {
	JobID     string
	TaskIndex uint32
	Data      []byte
}

// NarRequest asks the server to stream these NARs. Control lane.
type NarRequest struct {
	JobID string
	Paths []string
}

// NarRequestResume resumes a broken pull from an offset. Bulk lane.
type NarRequestResume struct {
	JobID         string
	StorePath     string
	ReceivedBytes uint64
	StreamToken   string
}

// EvalCachePull asks for the eval-cache blob. Control lane.
type EvalCachePull struct {
	JobID       string
	Fingerprint string
}

// RequestJob says one slot of this kind is free. Control lane.
type RequestJob struct {
	Kind JobKind
}

// ClientClusterSignal is ClientMessage::ClusterSignal, for cluster jobs (no executor uses it
// yet). Control lane.
type ClientClusterSignal struct {
	Attempt string
	To      Option[ClusterAddress]
	Payload []byte
}

// CacheQuery is a cache lookup (gradient-protocol §7.2); QueryID is echoed in the CacheStatus
// or CacheError reply. Control lane.
type CacheQuery struct {
	JobID    string
	QueryID  string
	Paths    []string
	Mode     QueryMode
	NarSizes []Option[uint64]
	External bool
}

// EvalMessage attaches a warning or error to the job's evaluation. Control lane.
type EvalMessage struct {
	JobID   string
	Level   EvalMessageLevel
	Source  string
	Message string
}

// QueryKnownDerivations asks which .drv paths the server holds with complete closures.
// Control lane.
type QueryKnownDerivations struct {
	JobID    string
	QueryID  string
	DrvPaths []string
}

// UploadRequest asks to upload one object. Control lane.
type UploadRequest struct {
	JobID     string
	RequestID uint64
	Object    UploadObject
	Size      uint64
}

// UploadChunk carries upload bytes (passthrough grant only). Data aliases the frame after
// decoding. Bulk lane.
type UploadChunk struct {
	RequestID uint64
	Data      []byte
	Offset    uint64
	IsFinal   bool
}

// UploadFinished ends a transfer with its metadata. Control lane.
type UploadFinished struct {
	RequestID uint64
	Metadata  UploadMetadata
}

// UploadCancel abandons an upload. Control lane.
type UploadCancel struct {
	RequestID uint64
}

// HandoverDone (protocols 29–30 only; removed in 31) says a shared worker applied Handover.
// Control lane.
type HandoverDone struct{}

func (*InitConnection) isMessage()        {}
func (*AuthResponse) isMessage()          {}
func (*ReauthRequest) isMessage()         {}
func (*ClientReject) isMessage()          {}
func (*WorkerCapabilities) isMessage()    {}
func (*WorkerMetrics) isMessage()         {}
func (*RequestJobList) isMessage()        {}
func (*RequestJobChunk) isMessage()       {}
func (*AssignJobResponse) isMessage()     {}
func (*JobUpdate) isMessage()             {}
func (*JobCompleted) isMessage()          {}
func (*JobFailed) isMessage()             {}
func (*ClientDraining) isMessage()        {}
func (*BuildProgress) isMessage()         {}
func (*EvalProgress) isMessage()          {}
func (*LogChunk) isMessage()              {}
func (*NarRequest) isMessage()            {}
func (*NarRequestResume) isMessage()      {}
func (*EvalCachePull) isMessage()         {}
func (*RequestJob) isMessage()            {}
func (*ClientClusterSignal) isMessage()   {}
func (*CacheQuery) isMessage()            {}
func (*EvalMessage) isMessage()           {}
func (*QueryKnownDerivations) isMessage() {}
func (*UploadRequest) isMessage()         {}
func (*UploadChunk) isMessage()           {}
func (*UploadFinished) isMessage()        {}
func (*UploadCancel) isMessage()          {}
func (*HandoverDone) isMessage()          {}

func (*InitConnection) isClientMessage()        {}
func (*AuthResponse) isClientMessage()          {}
func (*ReauthRequest) isClientMessage()         {}
func (*ClientReject) isClientMessage()          {}
func (*WorkerCapabilities) isClientMessage()    {}
func (*WorkerMetrics) isClientMessage()         {}
func (*RequestJobList) isClientMessage()        {}
func (*RequestJobChunk) isClientMessage()       {}
func (*AssignJobResponse) isClientMessage()     {}
func (*JobUpdate) isClientMessage()             {}
func (*JobCompleted) isClientMessage()          {}
func (*JobFailed) isClientMessage()             {}
func (*ClientDraining) isClientMessage()        {}
func (*BuildProgress) isClientMessage()         {}
func (*EvalProgress) isClientMessage()          {}
func (*LogChunk) isClientMessage()              {}
func (*NarRequest) isClientMessage()            {}
func (*NarRequestResume) isClientMessage()      {}
func (*EvalCachePull) isClientMessage()         {}
func (*RequestJob) isClientMessage()            {}
func (*ClientClusterSignal) isClientMessage()   {}
func (*CacheQuery) isClientMessage()            {}
func (*EvalMessage) isClientMessage()           {}
func (*QueryKnownDerivations) isClientMessage() {}
func (*UploadRequest) isClientMessage()         {}
func (*UploadChunk) isClientMessage()           {}
func (*UploadFinished) isClientMessage()        {}
func (*UploadCancel) isClientMessage()          {}
func (*HandoverDone) isClientMessage()          {}
