package relational

import (
	"context"
	"fmt"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// StartBuildAttempt implements store.Builds.
func (s *Store) StartBuildAttempt(ctx context.Context, assignmentID string) (store.Attempt, error) {
	var out store.Attempt
	err := s.write(ctx, "start build attempt", func(tx Tx) error {
		a, err := openAssignment(ctx, tx, assignmentID, store.JobBuild)
		if err != nil {
			return err
		}
		out, err = ensureAttempt(ctx, tx, a, s.clock())
		return err
	})
	return out, err
}

// AppendBuildLog implements store.Builds (livelogs.go stores the chunk).
func (s *Store) AppendBuildLog(ctx context.Context, assignmentID string, data []byte) error {
	_, err := s.AppendBuildLogChunk(ctx, assignmentID, data)
	return err
}

// CompleteBuild implements store.Builds.
func (s *Store) CompleteBuild(ctx context.Context, assignmentID string, substituted bool) (store.Effects, error) {
	var out store.Effects
	err := s.write(ctx, "complete build", func(tx Tx) error {
		c := s.newChange()
		a, err := s.closeBuildReport(ctx, tx, c, assignmentID, store.OutcomeCompleted, attemptOutcomeOf(substituted), "")
		if err != nil {
			return err
		}
		status := store.BuildCompleted
		if substituted {
			status = store.BuildSubstituted
		}
		var derivationID string
		err = tx.QueryRow(ctx, `UPDATE build SET status = $2, substituted = $3, lost_worker_streak = 0, not_before = NULL,
			updated_at = $4 WHERE id = $1 RETURNING derivation_id`, a.buildID, int(status), substituted, c.now).Scan(&derivationID)
		if err != nil {
			return err
		}
		c.build(a.buildID, status, time.Time{})
		if err := linkCachedOutputs(ctx, tx, derivationID); err != nil {
			return err
		}
		if err := promoteDependents(ctx, tx, c, derivationID); err != nil {
			return err
		}
		out, err = s.finish(ctx, tx, c)
		return err
	})
	return out, err
}

func attemptOutcomeOf(substituted bool) store.AttemptOutcome {
	if substituted {
		return store.AttemptSubstituted
	}
	return store.AttemptBuilt
}

// closeBuildReport closes a build assignment and its attempt (opening one first when the
// worker reported before JobUpdate Building, so every outcome has an attempt row).
func (s *Store) closeBuildReport(ctx context.Context, tx Tx, c *change, assignmentID string,
	outcome store.AssignmentOutcome, attempt store.AttemptOutcome, reason string) (assignment, error) {
	a, err := openAssignment(ctx, tx, assignmentID, store.JobBuild)
	if err != nil {
		return a, err
	}
	if _, err := ensureAttempt(ctx, tx, a, c.now); err != nil {
		return a, err
	}
	if err := closeAttempt(ctx, tx, a.id, attempt, reason, c.now); err != nil {
		return a, err
	}
	return a, closeAssignment(ctx, tx, a.id, outcome, c.now)
}

// linkCachedOutputs points the derivation's outputs at their fully stored cache rows.
func linkCachedOutputs(ctx context.Context, tx Tx, derivationID string) error {
	_, err := tx.Exec(ctx, `UPDATE derivation_output SET
			cached_path_id = (SELECT cp.id FROM cached_path cp WHERE cp.store_path = derivation_output.path AND cp.file_hash IS NOT NULL),
			is_cached = EXISTS (SELECT 1 FROM cached_path cp WHERE cp.store_path = derivation_output.path AND cp.file_hash IS NOT NULL)
		WHERE derivation_id = $1`, derivationID)
	return err
}

// FailBuild implements store.Builds.
func (s *Store) FailBuild(ctx context.Context, assignmentID string, f store.BuildFailure) (store.Effects, error) {
	attempt := store.AttemptFailed
	if f.Kind == store.FailAborted || f.Kind == store.FailCanceled {
		attempt = store.AttemptAborted
	}
	var out store.Effects
	err := s.write(ctx, "fail build", func(tx Tx) error {
		c := s.newChange()
		reason := f.Kind.String()
		if f.Reason != "" {
			reason += ": " + f.Reason
		}
		a, err := s.closeBuildReport(ctx, tx, c, assignmentID, store.OutcomeFailed, attempt, reason)
		if err != nil {
			return err
		}
		if err := s.applyBuildFailure(ctx, tx, c, a.buildID, f); err != nil {
			return err
		}
		out, err = s.finish(ctx, tx, c)
		return err
	})
	return out, err
}

// applyBuildFailure is the gradient-server §6.4 table.
func (s *Store) applyBuildFailure(ctx context.Context, tx Tx, c *change, buildID string, f store.BuildFailure) error {
	switch f.Kind {
	case store.FailCanceled, store.FailSubstituteUnavailable:
		return requeueBuild(ctx, tx, c, buildID, false)
	case store.FailAborted:
		return setBuildStatus(ctx, tx, c, buildID, store.BuildAborted)
	case store.FailPermanent:
		return failForGood(ctx, tx, c, buildID, store.BuildFailedPermanent)
	case store.FailTimeout:
		return failForGood(ctx, tx, c, buildID, store.BuildFailedTimeout)
	case store.FailInputsUnavailable:
		return s.inputsUnavailable(ctx, tx, c, buildID, f.MissingPaths)
	case store.FailTransient, store.FailCorruptEvalCache:
		return s.retryOrFail(ctx, tx, c, buildID)
	}
	return fmt.Errorf("failure kind %d: %w", f.Kind, store.ErrInvalid)
}

// requeueBuild puts a build back to Queued; countLoss bumps its lost-worker streak, any other
// outcome ends the streak (gradient-server §6.5: losses "in a row").
func requeueBuild(ctx context.Context, tx Tx, c *change, buildID string, countLoss bool) error {
	streak := "0"
	if countLoss {
		streak = "lost_worker_streak + 1"
	}
	_, err := tx.Exec(ctx, `UPDATE build SET status = 1, not_before = NULL, queued_at = $2, updated_at = $2,
		lost_worker_streak = `+streak+` WHERE id = $1`, buildID, c.now)
	if err == nil {
		c.requeued(store.BuildJob(buildID))
		c.build(buildID, store.BuildQueued, time.Time{})
	}
	return err
}

// setBuildStatus sets a terminal status without cascading (Aborted).
func setBuildStatus(ctx context.Context, tx Tx, c *change, buildID string, status store.BuildStatus) error {
	_, err := tx.Exec(ctx, `UPDATE build SET status = $2, not_before = NULL, updated_at = $3 WHERE id = $1`,
		buildID, int(status), c.now)
	if err == nil {
		c.build(buildID, status, time.Time{})
	}
	return err
}

// failForGood sets FailedPermanent or FailedTimeout and cascades DependencyFailed.
func failForGood(ctx context.Context, tx Tx, c *change, buildID string, status store.BuildStatus) error {
	var derivationID string
	err := tx.QueryRow(ctx, `UPDATE build SET status = $2, not_before = NULL, updated_at = $3 WHERE id = $1
		RETURNING derivation_id`, buildID, int(status), c.now).Scan(&derivationID)
	if err != nil {
		return err
	}
	c.build(buildID, status, time.Time{})
	return cascadeDependencyFailed(ctx, tx, c, []string{derivationID})
}

// retryOrFail uses an attempt: FailedTransient with doubling backoff while attempts remain,
// then FailedPermanent.
func (s *Store) retryOrFail(ctx context.Context, tx Tx, c *change, buildID string) error {
	var attempt int
	if err := tx.QueryRow(ctx, `UPDATE build SET attempt = attempt + 1, lost_worker_streak = 0 WHERE id = $1 RETURNING attempt`,
		buildID).Scan(&attempt); err != nil {
		return err
	}
	if attempt >= s.policy.MaxBuildAttempts {
		return failForGood(ctx, tx, c, buildID, store.BuildFailedPermanent)
	}
	notBefore := c.now.Add(s.policy.Backoff(attempt))
	if _, err := tx.Exec(ctx, `UPDATE build SET status = 8, not_before = $2, updated_at = $3 WHERE id = $1`,
		buildID, notBefore, c.now); err != nil {
		return err
	}
	c.build(buildID, store.BuildFailedTransient, notBefore)
	c.requeued(store.BuildJob(buildID))
	return nil
}

// AbortBuild implements store.Builds.
func (s *Store) AbortBuild(ctx context.Context, buildID, reason string) (store.Effects, error) {
	var out store.Effects
	err := s.write(ctx, "abort build", func(tx Tx) error {
		c := s.newChange()
		if err := mustExist(ctx, tx, "build", buildID); err != nil {
			return err
		}
		n, err := tx.Exec(ctx, `UPDATE build SET status = 5, not_before = NULL, updated_at = $2
			WHERE id = $1 AND status IN (0, 1, 2, 8)`, buildID, c.now)
		if err != nil || n == 0 {
			return err
		}
		c.build(buildID, store.BuildAborted, time.Time{})
		if err := closeOpenAssignments(ctx, tx, c, []string{buildID}, "aborted: "+reason); err != nil {
			return err
		}
		out, err = s.finish(ctx, tx, c)
		return err
	})
	return out, err
}
