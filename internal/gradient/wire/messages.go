package wire

// Message is one top-level frame: a ClientMessage or a ServerMessage.
type Message interface{ isMessage() }

// ClientMessage is a frame from worker to server (gradient-protocol §3.1). The variants are
// the pointer types listed in clientMessageEnum; the index on the wire is their position
// there.
type ClientMessage interface {
	Message
	isClientMessage()
}

// ServerMessage is a frame from server to worker (gradient-protocol §3.2). The variants are
// the pointer types listed in serverMessageEnum.
type ServerMessage interface {
	Message
	isServerMessage()
}

// clientMessageEnum is ClientMessage in wire order. `oldest = 30`: the shapes before 30 differ
// in ways the annotations cannot express (removed and reordered fields), and 30 is the
// oldest version gradient speaks (gradient-protocol §0).
var clientMessageEnum = dataEnum[ClientMessage]("ClientMessage",
	variant[InitConnection](0),
	variant[AuthResponse](0),
	variant[ReauthRequest](0),
	variant[ClientReject](0),
	variant[WorkerCapabilities](0),
	variant[WorkerMetrics](0),
	variant[RequestJobList](0),
	variant[RequestJobChunk](0),
	variant[AssignJobResponse](0),
	variant[JobUpdate](0),
	variant[JobCompleted](0),
	variant[JobFailed](0),
	variant[ClientDraining](0),
	variant[BuildProgress](0),
	variant[EvalProgress](0),
	variant[LogChunk](0),
	variant[NarRequest](0),
	variant[NarRequestResume](0),
	variant[EvalCachePull](0),
	variant[RequestJob](0),
	variant[ClientClusterSignal](0),
	variant[CacheQuery](0),
	variant[EvalMessage](0),
	variant[QueryKnownDerivations](0),
	variant[UploadRequest](0),
	variant[UploadChunk](0),
	variant[UploadFinished](0),
	variant[UploadCancel](0),
	variant[HandoverDone](29),
).withOldest(30)

// serverMessageEnum is ServerMessage in wire order, with the same `oldest = 30`.
var serverMessageEnum = dataEnum[ServerMessage]("ServerMessage",
	variant[AuthChallenge](0),
	variant[InitAck](0),
	variant[AuthUpdate](0),
	variant[ServerReject](0),
	variant[ServerError](0),
	variant[ServerDraining](0),
	variant[JobListChunk](0),
	variant[JobOffer](0),
	variant[AssignJob](0),
	variant[AbortJob](0),
	variant[StartCluster](0),
	variant[ServerClusterSignal](0),
	variant[AbortCluster](0),
	variant[Credential](0),
	variant[NarPush](0),
	variant[NarUnavailable](0),
	variant[NarAbort](0),
	variant[NarStreamHeader](0),
	variant[EvalCachePullResult](0),
	variant[EvalCacheChunk](0),
	variant[CacheStatus](0),
	variant[KnownDerivations](0),
	variant[CacheError](0),
	variant[UploadGrant](0),
	variant[UploadCommitted](0),
	variant[Authenticate](0),
	variant[Handover](29),
).withOldest(30)

// sharedEnums lists every enum the messages reach, so the plan compiler can find each one's
// registry. A missing entry panics at the first encode or decode (and in every test).
func sharedEnums() []*enumDef {
	return []*enumDef{
		jobUpdateKindEnum, jobEnum, flakeStepEnum, flakeSourceEnum, buildSpecKindEnum,
		jobKindEnum, queryModeEnum, evalMessageLevelEnum, credentialKindEnum, jobPhaseEnum,
		buildFailureKindEnum, buildProgressPhaseEnum, evalProgressKindEnum, inputFetchStateEnum,
		buildStageEnum, uploadObjectEnum, uploadMetadataEnum, grantTargetEnum, uploadOutcomeEnum,
		evalCachePullOutcomeEnum,
	}
}
