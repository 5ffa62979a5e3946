package relational

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// assignment is an open dispatched_job row.
type assignment struct {
	id, workerID    string
	kind            store.JobKind
	evalID, buildID string
}

func (a assignment) job() store.JobRef {
	if a.kind == store.JobEval {
		return store.EvalJob(a.evalID)
	}
	return store.BuildJob(a.buildID)
}

// openAssignment loads an open assignment of the given kind; ErrStaleAssignment otherwise.
func openAssignment(ctx context.Context, tx Tx, id string, kind store.JobKind) (assignment, error) {
	a, err := anyOpenAssignment(ctx, tx, id)
	if err == nil && a.kind != kind {
		return a, fmt.Errorf("assignment %q: %w", id, store.ErrStaleAssignment)
	}
	return a, err
}

// anyOpenAssignment loads an open assignment of either kind; ErrStaleAssignment otherwise.
func anyOpenAssignment(ctx context.Context, tx Tx, id string) (assignment, error) {
	a := assignment{id: id}
	if !validID(id) {
		return a, fmt.Errorf("assignment %q: %w", id, store.ErrStaleAssignment)
	}
	var k int
	var evalID, buildID *string
	err := tx.QueryRow(ctx, `SELECT kind, evaluation_id, build_id, worker_id FROM dispatched_job
		WHERE id = $1 AND finished_at IS NULL`, id).Scan(&k, &evalID, &buildID, &a.workerID)
	if errors.Is(err, ErrNoRows) {
		return a, fmt.Errorf("assignment %q: %w", id, store.ErrStaleAssignment)
	}
	if err != nil {
		return a, err
	}
	a.kind = store.JobKind(k)
	if evalID != nil {
		a.evalID = *evalID
	}
	if buildID != nil {
		a.buildID = *buildID
	}
	return a, nil
}

// closeAssignment finishes an open assignment with an outcome.
func closeAssignment(ctx context.Context, tx Tx, id string, outcome store.AssignmentOutcome, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE dispatched_job SET finished_at = $2, outcome = $3 WHERE id = $1 AND finished_at IS NULL`,
		id, now, string(outcome))
	return err
}

// closeOpenAssignments abandons the open assignments of the given builds (server aborts) and
// aborts their running attempts, reporting each in c.Closed.
func closeOpenAssignments(ctx context.Context, tx Tx, c *change, buildIDs []string, reason string) error {
	for _, part := range chunks(buildIDs, inChunk) {
		args := append([]any{c.now}, stringArgs(part)...)
		closed, err := queryAll(ctx, tx, func(r Row) (assignment, error) {
			a := assignment{kind: store.JobBuild}
			err := r.Scan(&a.id, &a.buildID, &a.workerID)
			return a, err
		}, `UPDATE dispatched_job SET finished_at = $1, outcome = 'abandoned'
			WHERE finished_at IS NULL AND build_id IN (`+placeholders(2, len(part))+`) RETURNING id, build_id, worker_id`, args...)
		if err != nil {
			return err
		}
		for _, a := range closed {
			c.closed(a)
			if err := closeAttempt(ctx, tx, a.id, store.AttemptAborted, reason, c.now); err != nil {
				return err
			}
		}
	}
	return nil
}

// closeAttempt finishes the running attempt of an assignment, if one is open.
func closeAttempt(ctx context.Context, tx Tx, assignmentID string, outcome store.AttemptOutcome, reason string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE build_attempt SET outcome = $2, failure_reason = $3, finished_at = $4
		WHERE assignment_id = $1 AND outcome = 0`, assignmentID, int(outcome), nilIfEmptyString(reason), now)
	return err
}

// ensureAttempt returns the attempt of a build assignment, opening it when none exists yet.
func ensureAttempt(ctx context.Context, tx Tx, a assignment, now time.Time) (store.Attempt, error) {
	att, err := attemptOf(ctx, tx, a.id)
	if !errors.Is(err, ErrNoRows) {
		return att, err
	}
	att = store.Attempt{ID: newID(), BuildID: a.buildID, AssignmentID: a.id, WorkerID: a.workerID,
		Outcome: store.AttemptRunning, StartedAt: now}
	_, err = tx.Exec(ctx, `INSERT INTO build_attempt (id, build_id, assignment_id, worker_id, outcome, started_at)
		VALUES ($1, $2, $3, $4, 0, $5)`, att.ID, att.BuildID, att.AssignmentID, att.WorkerID, now)
	return att, err
}

const attemptColumns = `id, build_id, assignment_id, worker_id, outcome, COALESCE(failure_reason, ''), started_at, finished_at, log_bytes`

func attemptOf(ctx context.Context, tx Tx, assignmentID string) (store.Attempt, error) {
	return scanAttempt(tx.QueryRow(ctx, `SELECT `+attemptColumns+` FROM build_attempt WHERE assignment_id = $1`, assignmentID))
}

func scanAttempt(r Row) (store.Attempt, error) {
	var a store.Attempt
	var outcome int
	var started, finished Timestamp
	err := r.Scan(&a.ID, &a.BuildID, &a.AssignmentID, &a.WorkerID, &outcome, &a.FailureReason, &started, &finished, &a.LogBytes)
	a.Outcome, a.StartedAt, a.FinishedAt = store.AttemptOutcome(outcome), started.Time, finished.Time
	return a, err
}
