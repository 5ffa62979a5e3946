package store

import "context"

// WebUI is what the web UI reads and does beyond the API's read models (gradient-server §17).
type WebUI interface {
	// RetryBuild puts a build that failed for good (FailedPermanent or FailedTimeout) back
	// to Queued with fresh counters. The builds its failure doomed (DependencyFailed) go
	// back to Created unless another failure still dooms them, and the Failed evaluations
	// needing any of them go back to Building, to settle again. ErrNotFound for an unknown
	// build, ErrConflict when it has not failed for good.
	RetryBuild(ctx context.Context, buildID string) (Effects, error)
	// EvaluationEdges lists the dependency edges among an evaluation's builds: Build needs
	// DependsOn.
	EvaluationEdges(ctx context.Context, evaluationID string) ([]BuildEdge, error)
	// BuildOutputs lists a build's outputs by name.
	BuildOutputs(ctx context.Context, buildID string) ([]Output, error)
	// EvaluationBuildCounts counts an evaluation's builds by status.
	EvaluationBuildCounts(ctx context.Context, evaluationID string) (map[BuildStatus]int, error)
	// EvaluationBuildsPage lists one page of an evaluation's builds, by pname then .drv
	// path, with their entry-point attrs: what a page of a big evaluation needs without
	// reading every build.
	EvaluationBuildsPage(ctx context.Context, q BuildPage) ([]BuildInfo, error)
}

// BuildPage asks for a page of an evaluation's builds.
type BuildPage struct {
	EvaluationID string
	Statuses     []BuildStatus // only builds in one of these; empty: every build
	Offset       int
	Limit        int // <= 0: 100; at most 1000
}

// BuildEdge is one dependency between two builds.
type BuildEdge struct {
	Build, DependsOn string
}
