package wire

// Unit enums of gradient-protocol §3.3: each value is its variant index. The registries give
// each variant its since; the constants must follow the registry order.

// JobKind is the kind of slot a RequestJob frees.
type JobKind uint8

const (
	JobKindFlake JobKind = iota
	JobKindBuild
)

var jobKindEnum = unitEnum[JobKind]("JobKind", unit("Flake", 0), unit("Build", 0))

func (k JobKind) String() string { return jobKindEnum.variantName(uint8(k)) }

// QueryMode is how a CacheQuery is meant (gradient-protocol §7.2).
type QueryMode uint8

const (
	QueryModeNormal QueryMode = iota
	QueryModePull
	QueryModePush
)

var queryModeEnum = unitEnum[QueryMode]("QueryMode", unit("Normal", 0), unit("Pull", 0), unit("Push", 0))

func (m QueryMode) String() string { return queryModeEnum.variantName(uint8(m)) }

// EvalMessageLevel is the severity of an EvalMessage.
type EvalMessageLevel uint8

const (
	EvalMessageLevelError EvalMessageLevel = iota
	EvalMessageLevelWarning
	EvalMessageLevelNotice
)

var evalMessageLevelEnum = unitEnum[EvalMessageLevel]("EvalMessageLevel",
	unit("Error", 0), unit("Warning", 0), unit("Notice", 0))

func (l EvalMessageLevel) String() string { return evalMessageLevelEnum.variantName(uint8(l)) }

// CredentialKind is what a Credential carries.
type CredentialKind uint8

const CredentialKindSSHKey CredentialKind = 0

var credentialKindEnum = unitEnum[CredentialKind]("CredentialKind", unit("SshKey", 0))

func (k CredentialKind) String() string { return credentialKindEnum.variantName(uint8(k)) }

// FlakeStep is one step of a flake job.
type FlakeStep uint8

const (
	FlakeStepFetchFlake FlakeStep = iota
	FlakeStepEvaluateFlake
	FlakeStepEvaluateDerivations
)

var flakeStepEnum = unitEnum[FlakeStep]("FlakeStep",
	unit("FetchFlake", 0), unit("EvaluateFlake", 0), unit("EvaluateDerivations", 0))

func (s FlakeStep) String() string { return flakeStepEnum.variantName(uint8(s)) }

// BuildSpecKind is how one BuildSpec is produced.
type BuildSpecKind uint8

const (
	BuildSpecKindBuild BuildSpecKind = iota
	BuildSpecKindSubstitute
	BuildSpecKindDownload
)

var buildSpecKindEnum = unitEnum[BuildSpecKind]("BuildSpecKind",
	unit("Build", 0), unit("Substitute", 0), unit("Download", 0))

func (k BuildSpecKind) String() string { return buildSpecKindEnum.variantName(uint8(k)) }

// JobPhase names a span of a job's timeline.
type JobPhase uint8

const (
	JobPhaseFetch JobPhase = iota
	JobPhasePushInputs
	JobPhaseEvalFlake
	JobPhaseEvalDerivations
	JobPhaseEvalCachePull
	JobPhaseEvalCachePush
	JobPhaseKnownDerivationsWait
	JobPhaseDrvClosurePush
	JobPhasePrefetch
	JobPhaseSubstituteFetch
	JobPhaseDownload
	JobPhaseBuild
	JobPhaseCompress
	JobPhaseNarPush
	JobPhaseCacheQueryWait
	JobPhaseNarFetch
	JobPhaseNarImport
	JobPhaseUploadWait
)

var jobPhaseEnum = unitEnum[JobPhase]("JobPhase",
	unit("Fetch", 0), unit("PushInputs", 0), unit("EvalFlake", 0), unit("EvalDerivations", 0),
	unit("EvalCachePull", 0), unit("EvalCachePush", 0), unit("KnownDerivationsWait", 0),
	unit("DrvClosurePush", 0), unit("Prefetch", 0), unit("SubstituteFetch", 0), unit("Download", 0),
	unit("Build", 0), unit("Compress", 0), unit("NarPush", 0), unit("CacheQueryWait", 0),
	unit("NarFetch", 0), unit("NarImport", 0), unit("UploadWait", 0))

func (p JobPhase) String() string { return jobPhaseEnum.variantName(uint8(p)) }

// BuildFailureKind classifies a JobFailed (gradient-server §6.4).
type BuildFailureKind uint8

const (
	BuildFailureKindTransient BuildFailureKind = iota
	BuildFailureKindPermanent
	BuildFailureKindTimeout
	BuildFailureKindSubstituteUnavailable
	BuildFailureKindInputsUnavailable
	BuildFailureKindCorruptEvalCache
	BuildFailureKindAborted
	BuildFailureKindCanceled
)

var buildFailureKindEnum = unitEnum[BuildFailureKind]("BuildFailureKind",
	unit("Transient", 0), unit("Permanent", 0), unit("Timeout", 0), unit("SubstituteUnavailable", 0),
	unit("InputsUnavailable", 0), unit("CorruptEvalCache", 0), unit("Aborted", 0), unit("Canceled", 0))

func (k BuildFailureKind) String() string { return buildFailureKindEnum.variantName(uint8(k)) }

// BuildProgressPhase is the transfer a BuildProgress reports.
type BuildProgressPhase uint8

const (
	BuildProgressPhaseDownload BuildProgressPhase = iota
	BuildProgressPhasePrefetch
	BuildProgressPhaseUpload
)

var buildProgressPhaseEnum = unitEnum[BuildProgressPhase]("BuildProgressPhase",
	unit("Download", 0), unit("Prefetch", 0), unit("Upload", 0))

func (p BuildProgressPhase) String() string { return buildProgressPhaseEnum.variantName(uint8(p)) }

// InputFetchState is the state of one flake input download.
type InputFetchState uint8

const (
	InputFetchStateQueued InputFetchState = iota
	InputFetchStateFetching
	InputFetchStateDone
	InputFetchStateFailed
)

var inputFetchStateEnum = unitEnum[InputFetchState]("InputFetchState",
	unit("Queued", 0), unit("Fetching", 0), unit("Done", 0), unit("Failed", 0))

func (s InputFetchState) String() string { return inputFetchStateEnum.variantName(uint8(s)) }

// BuildStage is the live stage of a build job (JobUpdateStage).
type BuildStage uint8

const (
	BuildStagePrefetch BuildStage = iota
	BuildStageBuild
	BuildStageUpload
)

var buildStageEnum = unitEnum[BuildStage]("BuildStage",
	unit("Prefetch", 0), unit("Build", 0), unit("Upload", 0))

func (s BuildStage) String() string { return buildStageEnum.variantName(uint8(s)) }
