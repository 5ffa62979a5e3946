package store

import (
	"context"
	"time"
)

// Retention is what the cache's garbage collection and the retention of evaluations and logs
// read and delete (gradient-server §15). The decisions are the retention package's; these
// methods only read the graph and delete what they are told to.
type Retention interface {
	// RetentionGraph reads every evaluation with the store paths it made (its builds'
	// outputs and .drv files, and its flake source) and every cached path, complete or
	// pending, without signatures.
	RetentionGraph(ctx context.Context) (RetentionGraph, error)
	// DeleteCachedPaths deletes the rows of the store hashes (their signatures with them,
	// outputs pointing at them no longer cached) and returns the hashes that existed.
	DeleteCachedPaths(ctx context.Context, storeHashes []string) ([]string, error)
	// PruneEvaluations deletes the settled evaluations created before `before` that keep does
	// not name, with their messages, entry points, build links and assignments (builds are
	// shared and stay), and returns how many it deleted.
	PruneEvaluations(ctx context.Context, before time.Time, keep []string) (int, error)
	// PruneBuildLogs deletes the logs of attempts that finished before `before`, except
	// those of builds an evaluation in keep needs, and returns how many attempts lost a log.
	PruneBuildLogs(ctx context.Context, before time.Time, keep []string) (int, error)
}

// RetentionGraph is what the garbage collection plans with.
type RetentionGraph struct {
	Evaluations []RetainedEvaluation
	Paths       []CachedPath
}

// RetainedEvaluation is an evaluation with the store paths it made.
type RetainedEvaluation struct {
	ID, ProjectID, Branch string
	Status                EvaluationStatus
	CreatedAt             time.Time
	StorePaths            []string
}
