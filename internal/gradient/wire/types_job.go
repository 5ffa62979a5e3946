package wire

// Shared job types of gradient-protocol §3.3.

// GradientCapabilities are the negotiated feature flags, in exactly this wire order.
type GradientCapabilities struct {
	Core, Federate, Fetch, Eval, Build, Cache bool
}

// Job is what AssignJob assigns: *FlakeJob or *BuildJob.
type Job interface{ isJob() }

var jobEnum = dataEnum[Job]("Job", newtypeVariant[FlakeJob](0), newtypeVariant[BuildJob](0))

func (*FlakeJob) isJob() {}
func (*BuildJob) isJob() {}

// FlakeJob fetches and/or evaluates a flake (Job::Flake).
type FlakeJob struct {
	Steps          []FlakeStep
	Source         FlakeSource
	Wildcards      []string
	TimeoutSecs    Option[uint64]
	InputOverrides []FlakeInputOverride
	InputUpdate    Option[InputUpdateSpec]
}

// FlakeInputOverride replaces one flake input's URL.
type FlakeInputOverride struct {
	InputName string
	URL       Option[string]
}

// InputUpdateSpec asks the job to bump flake inputs.
type InputUpdateSpec struct {
	Generator    string
	Inputs       []string
	DiscoverOnly bool
}

// FlakeSource is where a flake comes from: *FlakeSourceRepository or *FlakeSourceCached.
type FlakeSource interface{ isFlakeSource() }

var flakeSourceEnum = dataEnum[FlakeSource]("FlakeSource",
	variant[FlakeSourceRepository](0), variant[FlakeSourceCached](0))

// FlakeSourceRepository is a repository at a commit.
type FlakeSourceRepository struct {
	URL    string
	Commit string
}

// FlakeSourceCached is a source already in the store.
type FlakeSourceCached struct {
	StorePath string
}

func (*FlakeSourceRepository) isFlakeSource() {}
func (*FlakeSourceCached) isFlakeSource()     {}

// BuildJob builds derivations (Job::Build).
type BuildJob struct {
	Builds      []BuildSpec
	Requirement BuildRequirement
}

// BuildRequirement is the system and features a job needs.
type BuildRequirement struct {
	Architecture     string
	RequiredFeatures []string
}

// BuildSpec is one derivation of a BuildJob.
type BuildSpec struct {
	BuildID       string
	DrvPath       string
	Kind          BuildSpecKind
	IsFixedOutput bool
	Outputs       []DerivationOutput
	TimeoutSecs   Option[uint64]
	MaxSilentSecs Option[uint64]
}

// DerivationOutput is one named output path.
type DerivationOutput struct {
	Name string
	Path string
}

// JobPhaseSpan is one timed phase of a job.
type JobPhaseSpan struct {
	Phase   JobPhase
	StartMs uint64
	EndMs   uint64
	Parent  Option[uint32]
	Paths   uint32
	Bytes   uint64
}

// BuildMetrics are a build's resource figures. The last three names are inferred
// (gradient-protocol §3.3).
type BuildMetrics struct {
	PeakRAMMB        Option[uint64]
	CPUTimeMs        Option[uint64]
	AvgCPUPct        Option[float32]
	DiskReadBytes    Option[uint64]
	DiskWriteBytes   Option[uint64]
	OOMKilled        bool
	BuildTimeMs      Option[uint64]
	ConcurrentBuilds Option[uint32]
	BuildCores       Option[uint32]
	CPUCoreScore     Option[uint32]
}

// EvalProgressKind is the body of EvalProgress: *EvalProgressFetching or
// *EvalProgressEvaluating.
type EvalProgressKind interface{ isEvalProgressKind() }

var evalProgressKindEnum = dataEnum[EvalProgressKind]("EvalProgress",
	variant[EvalProgressFetching](0), variant[EvalProgressEvaluating](0))

// EvalProgressFetching lists input downloads.
type EvalProgressFetching struct {
	Inputs []InputFetch
}

// EvalProgressEvaluating is the live thunk count.
type EvalProgressEvaluating struct {
	Thunks uint64
}

func (*EvalProgressFetching) isEvalProgressKind()   {}
func (*EvalProgressEvaluating) isEvalProgressKind() {}

// InputFetch is one input download row.
type InputFetch struct {
	Name            string
	State           InputFetchState
	DownloadedBytes uint64
	ExpectedBytes   uint64
}
