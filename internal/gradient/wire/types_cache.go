package wire

// Shared scheduling, cache, upload, cluster and peer types of gradient-protocol §3.3.

// PeerToken is the (peer_id, token) pair of AuthResponse and Authenticate; the wire writes
// it as a tuple. Token is a secret: String redacts it.
type PeerToken struct {
	PeerID string
	Token  string
}

func (PeerToken) isTuple() {}

// FailedPeer names a peer whose token was refused, with the reason.
type FailedPeer struct {
	PeerID string
	Reason string
}

// JobCandidate is one job offered to a worker; evaluation candidates have no Requirement.
type JobCandidate struct {
	JobID         string
	RequiredPaths []RequiredPath
	DrvPaths      []string
	OutputPaths   []string
	Requirement   Option[BuildRequirement]
}

// RequiredPath is an input path with its cache sizes when cached.
type RequiredPath struct {
	Path      string
	CacheInfo Option[CacheInfo]
}

// CacheInfo are a cached path's compressed and NAR sizes.
type CacheInfo struct {
	FileSize uint64
	NarSize  uint64
}

// CandidateScore is the worker's score of one offered candidate.
type CandidateScore struct {
	JobID          string
	MissingCount   uint32
	MissingNarSize uint64
	OutputsPresent bool
}

// CachedPath is one path's cache state in a CacheStatus.
type CachedPath struct {
	Path       string
	Cached     bool
	FileSize   Option[uint64]
	NarSize    Option[uint64]
	URL        Option[string]
	NarHash    Option[string]
	FileHash   Option[string]
	References Option[[]string]
	Signatures Option[[]string]
	Deriver    Option[string]
	CA         Option[string]
}

// UploadObject is what an UploadRequest uploads: *UploadObjectNar or *UploadObjectEvalCache.
type UploadObject interface{ isUploadObject() }

var uploadObjectEnum = dataEnum[UploadObject]("UploadObject",
	variant[UploadObjectNar](0), variant[UploadObjectEvalCache](0))

// UploadObjectNar is a store path's NAR.
type UploadObjectNar struct {
	StorePath string
}

// UploadObjectEvalCache is an eval-cache blob.
type UploadObjectEvalCache struct {
	Fingerprint string
}

func (*UploadObjectNar) isUploadObject()       {}
func (*UploadObjectEvalCache) isUploadObject() {}

// UploadMetadata ends an upload: *NarUploadMetadata or *UploadMetadataEvalCache.
type UploadMetadata interface{ isUploadMetadata() }

var uploadMetadataEnum = dataEnum[UploadMetadata]("UploadMetadata",
	newtypeVariant[NarUploadMetadata](0), variant[UploadMetadataEvalCache](0))

// NarUploadMetadata is UploadMetadata::Nar: the uploaded NAR's narinfo fields.
type NarUploadMetadata struct {
	FileHash   string
	FileSize   uint64
	NarSize    uint64
	NarHash    string
	References []string
	Deriver    Option[string]
	CA         Option[string]
	Multipart  Option[CompletedMultipart]
}

// CompletedMultipart identifies a finished S3 multipart upload.
type CompletedMultipart struct {
	UploadID string
	Etags    []string
}

// UploadMetadataEvalCache is UploadMetadata::EvalCache.
type UploadMetadataEvalCache struct {
	SizeBytes uint64
}

func (*NarUploadMetadata) isUploadMetadata()       {}
func (*UploadMetadataEvalCache) isUploadMetadata() {}

// GrantTarget is where an admitted upload goes: *GrantTargetSkip, *GrantTargetPassthrough,
// *GrantTargetPut or *PresignedMultipart.
type GrantTarget interface{ isGrantTarget() }

var grantTargetEnum = dataEnum[GrantTarget]("GrantTarget",
	variant[GrantTargetSkip](0), variant[GrantTargetPassthrough](0),
	variant[GrantTargetPut](0), newtypeVariant[PresignedMultipart](0))

// GrantTargetSkip: the object is already stored; send nothing.
type GrantTargetSkip struct{}

// GrantTargetPassthrough: send UploadChunk frames from ResumeOffset.
type GrantTargetPassthrough struct {
	ResumeOffset uint64
}

// GrantTargetPut: PUT the object to URL.
type GrantTargetPut struct {
	URL string
}

// PresignedMultipart is GrantTarget::Multipart: upload parts to presigned URLs.
type PresignedMultipart struct {
	UploadID string
	PartSize uint64
	PartURLs []string
}

func (*GrantTargetSkip) isGrantTarget()        {}
func (*GrantTargetPassthrough) isGrantTarget() {}
func (*GrantTargetPut) isGrantTarget()         {}
func (*PresignedMultipart) isGrantTarget()     {}

// UploadOutcome is an upload's result: *UploadOutcomeOk, *UploadOutcomeRetry or
// *UploadOutcomeRejected.
type UploadOutcome interface{ isUploadOutcome() }

var uploadOutcomeEnum = dataEnum[UploadOutcome]("UploadOutcome",
	variant[UploadOutcomeOk](0), variant[UploadOutcomeRetry](0), variant[UploadOutcomeRejected](0))

// UploadOutcomeOk: committed.
type UploadOutcomeOk struct{}

// UploadOutcomeRetry: not committed; try again.
type UploadOutcomeRetry struct {
	Reason string
}

// UploadOutcomeRejected: refused for good.
type UploadOutcomeRejected struct {
	Reason string
}

func (*UploadOutcomeOk) isUploadOutcome()       {}
func (*UploadOutcomeRetry) isUploadOutcome()    {}
func (*UploadOutcomeRejected) isUploadOutcome() {}

// EvalCachePullOutcome answers EvalCachePull: *EvalCachePullOutcomeMiss,
// *EvalCachePullOutcomePresigned or *EvalCachePullOutcomeInline.
type EvalCachePullOutcome interface{ isEvalCachePullOutcome() }

var evalCachePullOutcomeEnum = dataEnum[EvalCachePullOutcome]("EvalCachePullOutcome",
	variant[EvalCachePullOutcomeMiss](0), variant[EvalCachePullOutcomePresigned](0),
	variant[EvalCachePullOutcomeInline](0))

// EvalCachePullOutcomeMiss: no blob.
type EvalCachePullOutcomeMiss struct{}

// EvalCachePullOutcomePresigned: fetch the blob from URL.
type EvalCachePullOutcomePresigned struct {
	URL string
}

// EvalCachePullOutcomeInline: EvalCacheChunk frames follow.
type EvalCachePullOutcomeInline struct {
	TotalBytes  uint64
	StreamToken string
}

func (*EvalCachePullOutcomeMiss) isEvalCachePullOutcome()      {}
func (*EvalCachePullOutcomePresigned) isEvalCachePullOutcome() {}
func (*EvalCachePullOutcomeInline) isEvalCachePullOutcome()    {}

// ClusterAddress addresses one member of a cluster job.
type ClusterAddress struct {
	Role  string
	Index uint32
}

// ClusterMembership is this worker's place in a cluster job.
type ClusterMembership struct {
	Attempt  string
	Role     string
	Index    uint32
	HoldSecs uint32
}

// ClusterPeer is one roster entry of StartCluster.
type ClusterPeer struct {
	Role     string
	Index    uint32
	Worker   string
	Zone     Option[string]
	Endpoint Option[string]
}
