package wire

// JobUpdateKind is the body of a JobUpdate (gradient-protocol §3.3), one of the
// JobUpdate* variants or *EvalStatsReport.
type JobUpdateKind interface{ isJobUpdateKind() }

var jobUpdateKindEnum = dataEnum[JobUpdateKind]("JobUpdateKind",
	variant[JobUpdateFetching](0),
	variant[JobUpdateFetchResult](0),
	variant[JobUpdateEvaluatingFlake](0),
	variant[JobUpdateEvaluatingDerivations](0),
	variant[JobUpdateEvalResult](0),
	variant[JobUpdateBuilding](0),
	variant[JobUpdateBuildOutput](0),
	variant[JobUpdateCompressing](0),
	newtypeVariant[EvalStatsReport](0),
	variant[JobUpdateInputUpdateResult](0),
	variant[JobUpdateInputUpdateExpansion](0),
	variant[JobUpdateStage](0),
)

// JobUpdateFetching: the flake is being fetched.
type JobUpdateFetching struct{}

// JobUpdateFetchResult: the fetch finished, with the fetched source's store path.
type JobUpdateFetchResult struct {
	FlakeSource Option[string]
}

// JobUpdateEvaluatingFlake: the flake is being evaluated.
type JobUpdateEvaluatingFlake struct{}

// JobUpdateEvaluatingDerivations: the derivations are being evaluated.
type JobUpdateEvaluatingDerivations struct{}

// JobUpdateEvalResult carries the evaluation's derivations, warnings and errors.
type JobUpdateEvalResult struct {
	Derivations []DiscoveredDerivation
	Warnings    []string
	Errors      []string
}

// JobUpdateBuilding: the build with this ID started.
type JobUpdateBuilding struct {
	BuildID string
}

// JobUpdateBuildOutput reports one finished build's outputs.
type JobUpdateBuildOutput struct {
	BuildID     string
	Outputs     []BuildOutput
	Metrics     Option[BuildMetrics]
	Substituted bool
}

// JobUpdateCompressing is no longer sent; kept for the index.
type JobUpdateCompressing struct{}

// JobUpdateInputUpdateResult reports an input update's candidate lock and bumps.
type JobUpdateInputUpdateResult struct {
	CandidateLock string
	Bumped        []InputBump
}

// JobUpdateInputUpdateExpansion lists the inputs a wildcard matched.
type JobUpdateInputUpdateExpansion struct {
	Matched []string
}

// JobUpdateStage is the live stage of a build job.
type JobUpdateStage struct {
	Stage BuildStage
}

func (*JobUpdateFetching) isJobUpdateKind()              {}
func (*JobUpdateFetchResult) isJobUpdateKind()           {}
func (*JobUpdateEvaluatingFlake) isJobUpdateKind()       {}
func (*JobUpdateEvaluatingDerivations) isJobUpdateKind() {}
func (*JobUpdateEvalResult) isJobUpdateKind()            {}
func (*JobUpdateBuilding) isJobUpdateKind()              {}
func (*JobUpdateBuildOutput) isJobUpdateKind()           {}
func (*JobUpdateCompressing) isJobUpdateKind()           {}
func (*EvalStatsReport) isJobUpdateKind()                {}
func (*JobUpdateInputUpdateResult) isJobUpdateKind()     {}
func (*JobUpdateInputUpdateExpansion) isJobUpdateKind()  {}
func (*JobUpdateStage) isJobUpdateKind()                 {}

// DiscoveredDerivation is one derivation found by evaluation. Attr is non-empty only for
// entry points; Architecture is the system or "builtin".
type DiscoveredDerivation struct {
	Attr             string
	DrvPath          string
	Outputs          []DerivationOutput
	Dependencies     []string
	InputSources     []string
	Architecture     string
	RequiredFeatures []string
	TimeoutSecs      Option[uint64]
	MaxSilentSecs    Option[uint64]
	PreferLocalBuild bool
	IsFixedOutput    bool
	AllowSubstitutes bool
	Pname            Option[string]
}

// BuildOutput is one output of a finished build.
type BuildOutput struct {
	Name      string
	StorePath string
	Hash      string
	NarSize   Option[int64]
	NarHash   Option[string]
	Products  []BuildProduct
}

// BuildProduct is one line of nix-support/hydra-build-products.
type BuildProduct struct {
	FileType string
	Subtype  string
	Name     string
	Path     string
	Size     Option[uint64]
}

// EvalStatsReport is JobUpdateKind::EvalStats: evaluator statistics.
type EvalStatsReport struct {
	TotalThunks   uint64
	FnCalls       uint64
	PrimopCalls   uint64
	Lookups       uint64
	AllocBytes    uint64
	PeakHeapMB    uint64
	PeakRSSMB     uint64
	TotalEvalMs   uint64
	WorkerID      string
	PerEntryPoint []EntryPointStats
	FlakeNodes    []FlakeNode
}

// EntryPointStats are the evaluation figures of one entry point.
type EntryPointStats struct {
	Attr       string
	Thunks     uint64
	FnCalls    uint64
	EvalMs     uint64
	AllocBytes uint64
}

// FlakeNode is one node of the evaluated flake's input graph.
type FlakeNode struct {
	Path         string
	Parent       Option[string]
	Name         string
	Kind         string
	IsDerivation bool
	DrvPath      Option[string]
}

// InputBump is one input an update moved.
type InputBump struct {
	Name   string
	OldRev Option[string]
	NewRev string
}
