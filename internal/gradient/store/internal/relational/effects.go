package relational

import (
	"context"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// change accumulates one transaction's store.Effects. A fresh one is made inside every
// transaction body, so a retried transaction never reports a discarded attempt's effects.
type change struct {
	store.Effects
	now time.Time
	// touched holds builds whose evaluations may have settled.
	touched []string
}

func (s *Store) newChange() *change { return &change{now: s.clock()} }

// build records a build's new status; terminal statuses mark its evaluations for settling.
func (c *change) build(id string, status store.BuildStatus, notBefore time.Time) {
	c.Builds = append(c.Builds, store.BuildChange{BuildID: id, Status: status, NotBefore: notBefore})
	switch {
	case status == store.BuildQueued:
		c.Startable = append(c.Startable, store.BuildJob(id))
	case status.Terminal():
		c.touched = append(c.touched, id)
	}
}

// requeued records a job put back into the queue.
func (c *change) requeued(job store.JobRef) { c.Requeued = append(c.Requeued, job) }

// closed records an assignment closed under a worker that may still run it.
func (c *change) closed(a assignment) {
	c.Closed = append(c.Closed, store.OpenAssignment{AssignmentID: a.id, Job: a.job(), WorkerID: a.workerID})
}

// settle derives the terminal status of the evaluations needing the touched builds
// (gradient-server §6.4, last paragraph) and returns the effects.
func (s *Store) finish(ctx context.Context, tx Tx, c *change) (store.Effects, error) {
	evals, err := evaluationsNeeding(ctx, tx, c.touched)
	if err != nil {
		return store.Effects{}, err
	}
	for _, id := range evals {
		if err := s.settleEvaluation(ctx, tx, c, id); err != nil {
			return store.Effects{}, err
		}
	}
	if err := queueStatuses(ctx, tx, c); err != nil { // gradient-server §12.2
		return store.Effects{}, err
	}
	return c.Effects, nil
}

// evaluationsNeeding lists the evaluations in Building that need any of the builds.
func evaluationsNeeding(ctx context.Context, tx Tx, buildIDs []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, part := range chunks(buildIDs, inChunk) {
		ids, err := queryStrings(ctx, tx, `SELECT DISTINCT bj.evaluation_id FROM build_job bj
			JOIN evaluation e ON e.id = bj.evaluation_id
			WHERE e.status = 3 AND bj.build_id IN (`+placeholders(1, len(part))+`)`, stringArgs(part)...)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out, nil
}

// settleEvaluation ends an evaluation in Building once none of its builds can run any more:
// none is Queued, Building or FailedTransient. (A Created build whose dependencies are all
// in the evaluation's closure can only still start if one of them is active; one waiting
// for a derivation never described cannot.) Completed when every build succeeded and no
// error message exists, Failed otherwise.
func (s *Store) settleEvaluation(ctx context.Context, tx Tx, c *change, evalID string) error {
	var active, unsuccessful int
	err := tx.QueryRow(ctx, `SELECT
			COALESCE(SUM(CASE WHEN b.status IN (1, 2, 8) THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN b.status IN (3, 7) THEN 0 ELSE 1 END), 0)
		FROM build_job bj JOIN build b ON b.id = bj.build_id WHERE bj.evaluation_id = $1`, evalID).Scan(&active, &unsuccessful)
	if err != nil || active > 0 {
		return err
	}
	var hasError bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM evaluation_message WHERE evaluation_id = $1 AND level = 0)`,
		evalID).Scan(&hasError); err != nil {
		return err
	}
	status := store.EvalCompleted
	if unsuccessful > 0 || hasError {
		status = store.EvalFailed
	}
	n, err := tx.Exec(ctx, `UPDATE evaluation SET status = $2, updated_at = $3 WHERE id = $1 AND status = 3`,
		evalID, int(status), c.now)
	if err == nil && n == 1 {
		c.Settled = append(c.Settled, store.SettledEvaluation{EvaluationID: evalID, Status: status})
	}
	return err
}

// cascadeDependencyFailed marks DependencyFailed every unstarted build that transitively needs
// one of the derivations, across evaluations (gradient-server §6.4 Permanent, Timeout).
// Building builds are left to finish: they started with their inputs present.
func cascadeDependencyFailed(ctx context.Context, tx Tx, c *change, derivationIDs []string) error {
	for _, part := range chunks(derivationIDs, inChunk) {
		args := append([]any{c.now}, stringArgs(part)...)
		ids, err := queryStrings(ctx, tx, `WITH RECURSIVE dependents(id) AS (
				SELECT derivation_id FROM derivation_dependency WHERE depends_on_id IN (`+placeholders(2, len(part))+`)
				UNION
				SELECT dd.derivation_id FROM derivation_dependency dd JOIN dependents d ON dd.depends_on_id = d.id)
			UPDATE build SET status = 6, not_before = NULL, updated_at = $1
			WHERE status IN (0, 1, 8) AND derivation_id IN (SELECT id FROM dependents)
			RETURNING id`, args...)
		if err != nil {
			return err
		}
		for _, id := range ids {
			c.build(id, store.BuildDependencyFailed, time.Time{})
		}
	}
	return nil
}

// readyCondition is true for a build whose dependencies all succeeded (Completed or
// Substituted). A dependency without a build (an undescribed stub) is not ready.
const readyCondition = `NOT EXISTS (SELECT 1 FROM derivation_dependency dd
		LEFT JOIN build db ON db.derivation_id = dd.depends_on_id
		WHERE dd.derivation_id = build.derivation_id AND (db.status IS NULL OR db.status NOT IN (3, 7)))`

// promoteDependents queues the Created builds needing the derivation whose dependencies now
// all succeeded.
func promoteDependents(ctx context.Context, tx Tx, c *change, derivationID string) error {
	ids, err := queryStrings(ctx, tx, `UPDATE build SET status = 1, queued_at = $2, updated_at = $2
		WHERE status = 0 AND derivation_id IN (SELECT derivation_id FROM derivation_dependency WHERE depends_on_id = $1)
			AND `+readyCondition+` RETURNING id`, derivationID, c.now)
	for _, id := range ids {
		c.build(id, store.BuildQueued, time.Time{})
	}
	return err
}

// promoteReady queues those of the Created builds whose dependencies all succeeded.
func promoteReady(ctx context.Context, tx Tx, c *change, buildIDs []string) error {
	for _, part := range chunks(buildIDs, inChunk) {
		args := append([]any{c.now}, stringArgs(part)...)
		ids, err := queryStrings(ctx, tx, `UPDATE build SET status = 1, queued_at = $1, updated_at = $1
			WHERE status = 0 AND id IN (`+placeholders(2, len(part))+`) AND `+readyCondition+` RETURNING id`, args...)
		if err != nil {
			return err
		}
		for _, id := range ids {
			c.build(id, store.BuildQueued, time.Time{})
		}
	}
	return nil
}

// queryStrings runs a query returning one string column.
func queryStrings(ctx context.Context, tx Tx, query string, args ...any) ([]string, error) {
	return queryAll(ctx, tx, scanString, query, args...)
}
