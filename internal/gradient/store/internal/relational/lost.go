package relational

import (
	"context"
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// AbandonWorker implements store.Dispatch (gradient-server §6.5 lost worker).
func (s *Store) AbandonWorker(ctx context.Context, workerID, reason string) (store.Effects, error) {
	var out store.Effects
	err := s.write(ctx, "abandon worker", func(tx Tx) error {
		c := s.newChange()
		lost, err := abandonAssignments(ctx, tx, c, workerID)
		if err != nil {
			return err
		}
		for _, a := range lost {
			if a.kind == store.JobEval {
				err = s.lostEvaluation(ctx, tx, c, a.evalID)
			} else {
				err = s.lostBuild(ctx, tx, c, a, reason)
			}
			if err != nil {
				return err
			}
		}
		out, err = s.finish(ctx, tx, c)
		return err
	})
	return out, err
}

func abandonAssignments(ctx context.Context, tx Tx, c *change, workerID string) ([]assignment, error) {
	return queryAll(ctx, tx, func(r Row) (assignment, error) {
		a := assignment{workerID: workerID}
		var kind int
		var jobID string
		err := r.Scan(&a.id, &kind, &jobID)
		a.kind = store.JobKind(kind)
		if a.kind == store.JobEval {
			a.evalID = jobID
		} else {
			a.buildID = jobID
		}
		return a, err
	}, `UPDATE dispatched_job SET finished_at = $2, outcome = 'abandoned'
		WHERE worker_id = $1 AND finished_at IS NULL
		RETURNING id, kind, COALESCE(evaluation_id, build_id)`, workerID, c.now)
}

// lostBuild re-queues a build whose worker was lost, or fails it after LostWorkerLimit losses
// in a row; its running attempt ends Aborted ("WorkerLost").
func (s *Store) lostBuild(ctx context.Context, tx Tx, c *change, a assignment, reason string) error {
	if err := closeAttempt(ctx, tx, a.id, store.AttemptAborted, "WorkerLost: "+reason, c.now); err != nil {
		return err
	}
	var streak int
	err := tx.QueryRow(ctx, `SELECT lost_worker_streak + 1 FROM build WHERE id = $1 AND status = 2`, a.buildID).Scan(&streak)
	if errors.Is(err, ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if streak >= s.policy.LostWorkerLimit {
		if _, err := tx.Exec(ctx, `UPDATE build SET lost_worker_streak = $2 WHERE id = $1`, a.buildID, streak); err != nil {
			return err
		}
		return failForGood(ctx, tx, c, a.buildID, store.BuildFailedPermanent)
	}
	return requeueBuild(ctx, tx, c, a.buildID, true)
}

// lostEvaluation puts an evaluation whose flake job was lost back in the queue, or fails it
// after MaxEvalDispatches dispatches.
func (s *Store) lostEvaluation(ctx context.Context, tx Tx, c *change, evalID string) error {
	var dispatches int
	var status int
	if err := tx.QueryRow(ctx, `SELECT eval_dispatches, status FROM evaluation WHERE id = $1`, evalID).
		Scan(&dispatches, &status); err != nil {
		return err
	}
	if store.EvaluationStatus(status).Terminal() || store.EvaluationStatus(status) == store.EvalBuilding {
		return nil
	}
	if dispatches >= s.policy.MaxEvalDispatches {
		return failEvaluation(ctx, tx, c, evalID, fmt.Sprintf("flake job lost with its worker after %d dispatches", dispatches))
	}
	return requeueEvaluation(ctx, tx, c, evalID)
}

// RecoverInterruptedWork implements store.Store (gradient-server §6.6).
func (s *Store) RecoverInterruptedWork(ctx context.Context) (store.Recovery, error) {
	var out store.Recovery
	err := s.write(ctx, "recover interrupted work", func(tx Tx) error {
		now := s.clock()
		steps := []struct {
			n     *int
			query string
		}{
			{&out.Assignments, `UPDATE dispatched_job SET finished_at = $1, outcome = 'abandoned' WHERE finished_at IS NULL`},
			{&out.Attempts, `UPDATE build_attempt SET outcome = 4, failure_reason = 'server restarted', finished_at = $1 WHERE outcome = 0`},
			{&out.Builds, `UPDATE build SET status = 1, queued_at = $1, updated_at = $1 WHERE status = 2`},
			{&out.Evaluations, `UPDATE evaluation SET status = 0, updated_at = $1 WHERE status IN (1, 2, 4, 8)`},
		}
		for _, step := range steps {
			n, err := tx.Exec(ctx, step.query, now)
			if err != nil {
				return err
			}
			*step.n = int(n)
		}
		return nil
	})
	return out, err
}
