package relational

import (
	"context"
	"fmt"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// CreateEvaluation implements store.Evaluations.
func (s *Store) CreateEvaluation(ctx context.Context, e store.NewEvaluation) (store.Evaluation, error) {
	var out store.Evaluation
	err := s.write(ctx, "create evaluation", func(tx Tx) error {
		now := s.clock()
		out = store.Evaluation{ID: newID(), ProjectID: e.ProjectID, Commit: e.Commit, Branch: e.Branch, Wildcards: e.Wildcards,
			Status: store.EvalQueued, CreatedAt: now, UpdatedAt: now}
		if out.Wildcards == nil {
			p, err := getProject(ctx, tx, e.ProjectID)
			if err != nil {
				return err
			}
			out.Wildcards = p.Wildcards
		} else if err := mustExist(ctx, tx, "project", e.ProjectID); err != nil {
			return err
		}
		if err := insertEvaluation(ctx, tx, out); err != nil {
			return err
		}
		// A head started by hand counts as seen, so a trigger does not evaluate it again.
		_, err := recordHead(ctx, tx, store.NewTrigger{ProjectID: out.ProjectID, Branch: out.Branch,
			Commit: out.Commit, Source: "manual"}, out.ID, now)
		return err
	})
	return out, err
}

// SetEvaluationPhase implements store.Evaluations.
func (s *Store) SetEvaluationPhase(ctx context.Context, assignmentID string, phase store.EvaluationStatus) error {
	if !phase.Interrupted() {
		return fmt.Errorf("set evaluation phase %s: not a flake-job phase: %w", phase, store.ErrInvalid)
	}
	return s.write(ctx, "set evaluation phase", func(tx Tx) error {
		a, err := openAssignment(ctx, tx, assignmentID, store.JobEval)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE evaluation SET status = $2, updated_at = $3 WHERE id = $1 AND status IN (0, 1, 2, 4, 8)`,
			a.evalID, int(phase), s.clock())
		return err
	})
}

// RecordFlakeSource implements store.Evaluations.
func (s *Store) RecordFlakeSource(ctx context.Context, assignmentID, storePath string) error {
	return s.write(ctx, "record flake source", func(tx Tx) error {
		a, err := openAssignment(ctx, tx, assignmentID, store.JobEval)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE evaluation SET flake_source = $2, updated_at = $3 WHERE id = $1`,
			a.evalID, nilIfEmptyString(storePath), s.clock())
		return err
	})
}

// AddEvaluationMessages implements store.Evaluations.
func (s *Store) AddEvaluationMessages(ctx context.Context, evaluationID string, msgs []store.Message) error {
	return s.write(ctx, "add evaluation messages", func(tx Tx) error {
		if err := mustExist(ctx, tx, "evaluation", evaluationID); err != nil {
			return err
		}
		return insertMessages(ctx, tx, evaluationID, msgs, s.clock())
	})
}

func insertMessages(ctx context.Context, tx Tx, evalID string, msgs []store.Message, now time.Time) error {
	for _, m := range msgs {
		if m.Level > store.LevelNotice {
			return fmt.Errorf("message level %d: %w", m.Level, store.ErrInvalid)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO evaluation_message (evaluation_id, level, source, message, created_at)
			VALUES ($1, $2, $3, $4, $5)`, evalID, int(m.Level), m.Source, m.Text, now); err != nil {
			return err
		}
	}
	return nil
}

// CompleteEvaluationJob implements store.Evaluations.
func (s *Store) CompleteEvaluationJob(ctx context.Context, assignmentID string) (store.Effects, error) {
	var out store.Effects
	err := s.write(ctx, "complete evaluation job", func(tx Tx) error {
		c := s.newChange()
		a, err := openAssignment(ctx, tx, assignmentID, store.JobEval)
		if err != nil {
			return err
		}
		if err := closeAssignment(ctx, tx, a.id, store.OutcomeCompleted, c.now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE evaluation SET status = 3, updated_at = $2 WHERE id = $1 AND status IN (0, 1, 2, 4, 8)`,
			a.evalID, c.now); err != nil {
			return err
		}
		if err := s.settleEvaluation(ctx, tx, c, a.evalID); err != nil {
			return err
		}
		out, err = s.finish(ctx, tx, c)
		return err
	})
	return out, err
}

// FailEvaluationJob implements store.Evaluations.
func (s *Store) FailEvaluationJob(ctx context.Context, assignmentID string, f store.BuildFailure) (store.Effects, error) {
	var out store.Effects
	err := s.write(ctx, "fail evaluation job", func(tx Tx) error {
		c := s.newChange()
		a, err := openAssignment(ctx, tx, assignmentID, store.JobEval)
		if err != nil {
			return err
		}
		if err := closeAssignment(ctx, tx, a.id, store.OutcomeFailed, c.now); err != nil {
			return err
		}
		if err := s.applyEvalFailure(ctx, tx, c, a.evalID, f); err != nil {
			return err
		}
		out, err = s.finish(ctx, tx, c)
		return err
	})
	return out, err
}

func (s *Store) applyEvalFailure(ctx context.Context, tx Tx, c *change, evalID string, f store.BuildFailure) error {
	switch f.Kind {
	case store.FailCanceled, store.FailSubstituteUnavailable:
		return requeueEvaluation(ctx, tx, c, evalID)
	case store.FailAborted:
		return s.abortEvaluation(ctx, tx, c, evalID, "aborted by the worker: "+f.Reason)
	case store.FailTransient, store.FailCorruptEvalCache, store.FailInputsUnavailable:
		var attempts int
		if err := tx.QueryRow(ctx, `UPDATE evaluation SET attempts = attempts + 1 WHERE id = $1 RETURNING attempts`,
			evalID).Scan(&attempts); err != nil {
			return err
		}
		if attempts < s.policy.MaxEvalAttempts {
			return requeueEvaluation(ctx, tx, c, evalID)
		}
		f.Reason = fmt.Sprintf("%s (after %d attempts)", f.Reason, attempts)
	}
	return failEvaluation(ctx, tx, c, evalID, fmt.Sprintf("flake job failed (%s): %s", f.Kind, f.Reason))
}

// requeueEvaluation puts an unfinished evaluation back in the queue.
func requeueEvaluation(ctx context.Context, tx Tx, c *change, evalID string) error {
	n, err := tx.Exec(ctx, `UPDATE evaluation SET status = 0, updated_at = $2 WHERE id = $1 AND status IN (0, 1, 2, 4, 8)`,
		evalID, c.now)
	if err == nil && n == 1 {
		c.requeued(store.EvalJob(evalID))
	}
	return err
}

// failEvaluation ends an unfinished evaluation as Failed with an error message.
func failEvaluation(ctx context.Context, tx Tx, c *change, evalID, reason string) error {
	n, err := tx.Exec(ctx, `UPDATE evaluation SET status = 6, updated_at = $2 WHERE id = $1 AND status IN (0, 1, 2, 3, 4, 8)`,
		evalID, c.now)
	if err != nil || n == 0 {
		return err
	}
	c.Settled = append(c.Settled, store.SettledEvaluation{EvaluationID: evalID, Status: store.EvalFailed})
	return insertMessages(ctx, tx, evalID, []store.Message{{Level: store.LevelError, Source: "server", Text: reason}}, c.now)
}

// AbortEvaluation implements store.Evaluations.
func (s *Store) AbortEvaluation(ctx context.Context, evaluationID, reason string) (store.Effects, error) {
	var out store.Effects
	err := s.write(ctx, "abort evaluation", func(tx Tx) error {
		c := s.newChange()
		if err := mustExist(ctx, tx, "evaluation", evaluationID); err != nil {
			return err
		}
		if err := s.abortEvaluation(ctx, tx, c, evaluationID, reason); err != nil {
			return err
		}
		var err error
		out, err = s.finish(ctx, tx, c)
		return err
	})
	return out, err
}

// abortEvaluation aborts an unfinished evaluation: its open flake-job assignment closes, and
// every unfinished build no other unfinished evaluation needs is aborted with its assignment.
func (s *Store) abortEvaluation(ctx context.Context, tx Tx, c *change, evalID, reason string) error {
	n, err := tx.Exec(ctx, `UPDATE evaluation SET status = 7, updated_at = $2 WHERE id = $1 AND status IN (0, 1, 2, 3, 4, 8)`,
		evalID, c.now)
	if err != nil || n == 0 {
		return err
	}
	c.Settled = append(c.Settled, store.SettledEvaluation{EvaluationID: evalID, Status: store.EvalAborted})
	if err := insertMessages(ctx, tx, evalID, []store.Message{{Level: store.LevelNotice, Source: "server", Text: "aborted: " + reason}}, c.now); err != nil {
		return err
	}
	if err := closeEvalAssignment(ctx, tx, c, evalID); err != nil {
		return err
	}
	ids, err := queryStrings(ctx, tx, `UPDATE build SET status = 5, not_before = NULL, updated_at = $2
		WHERE status IN (0, 1, 2, 8) AND id IN (SELECT build_id FROM build_job WHERE evaluation_id = $1)
			AND NOT EXISTS (SELECT 1 FROM build_job o JOIN evaluation e ON e.id = o.evaluation_id
				WHERE o.build_id = build.id AND o.evaluation_id <> $1 AND e.status NOT IN (5, 6, 7))
		RETURNING id`, evalID, c.now)
	if err != nil {
		return err
	}
	for _, id := range ids {
		c.build(id, store.BuildAborted, time.Time{})
	}
	return closeOpenAssignments(ctx, tx, c, ids, "aborted: "+reason)
}

func closeEvalAssignment(ctx context.Context, tx Tx, c *change, evalID string) error {
	rows, err := tx.Query(ctx, `UPDATE dispatched_job SET finished_at = $2, outcome = 'abandoned'
		WHERE evaluation_id = $1 AND finished_at IS NULL RETURNING id, worker_id`, evalID, c.now)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		a := assignment{kind: store.JobEval, evalID: evalID}
		if err := rows.Scan(&a.id, &a.workerID); err != nil {
			return err
		}
		c.closed(a)
	}
	return rows.Err()
}
