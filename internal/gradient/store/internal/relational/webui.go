package relational

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// RetryBuild implements store.WebUI: the failed build is queued with fresh counters, the
// builds its failure doomed go back to Created (re-doomed at once when another failure still
// dooms them), and its Failed evaluations back to Building, to settle again when the build
// ends (an evaluation that failed with an error message settles Failed again).
func (s *Store) RetryBuild(ctx context.Context, buildID string) (store.Effects, error) {
	var out store.Effects
	err := s.write(ctx, "retry build", func(tx Tx) error {
		c := s.newChange()
		if err := mustExist(ctx, tx, "build", buildID); err != nil {
			return err
		}
		var derivationID string
		err := tx.QueryRow(ctx, `UPDATE build SET status = 1, attempt = 0, lost_worker_streak = 0, inputs_loops = 0,
				not_before = NULL, queued_at = $2, updated_at = $2
			WHERE id = $1 AND status IN (4, 9) RETURNING derivation_id`, buildID, c.now).Scan(&derivationID)
		if errors.Is(err, ErrNoRows) {
			return fmt.Errorf("build %s has not failed for good: %w", buildID, store.ErrConflict)
		}
		if err != nil {
			return err
		}
		c.build(buildID, store.BuildQueued, time.Time{})
		c.requeued(store.BuildJob(buildID))
		revived, err := reviveDependents(ctx, tx, c, derivationID)
		if err != nil {
			return err
		}
		if err := doomNeedingFailed(ctx, tx, c, revived); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE evaluation SET status = 3, updated_at = $2
			WHERE status = 6 AND id IN (SELECT evaluation_id FROM build_job WHERE build_id = $1)`, buildID, c.now); err != nil {
			return err
		}
		out, err = s.finish(ctx, tx, c)
		return err
	})
	return out, err
}

// reviveDependents puts the DependencyFailed builds needing the derivation, transitively,
// back to Created with fresh counters.
func reviveDependents(ctx context.Context, tx Tx, c *change, derivationID string) ([]string, error) {
	ids, err := queryStrings(ctx, tx, `WITH RECURSIVE dependents(id) AS (
			SELECT derivation_id FROM derivation_dependency WHERE depends_on_id = $1
			UNION
			SELECT dd.derivation_id FROM derivation_dependency dd JOIN dependents d ON dd.depends_on_id = d.id)
		UPDATE build SET status = 0, attempt = 0, lost_worker_streak = 0, inputs_loops = 0, not_before = NULL, updated_at = $2
		WHERE status = 6 AND derivation_id IN (SELECT id FROM dependents)
		RETURNING id`, derivationID, c.now)
	for _, id := range ids {
		c.build(id, store.BuildCreated, time.Time{})
	}
	return ids, err
}

// EvaluationEdges implements store.WebUI.
func (s *Store) EvaluationEdges(ctx context.Context, evaluationID string) ([]store.BuildEdge, error) {
	if !validID(evaluationID) {
		return nil, nil
	}
	return readAll(ctx, s, "evaluation edges", scanEdge, `SELECT b.id, db.id
		FROM build_job bj JOIN build b ON b.id = bj.build_id
		JOIN derivation_dependency dd ON dd.derivation_id = b.derivation_id
		JOIN build db ON db.derivation_id = dd.depends_on_id
		JOIN build_job dbj ON dbj.build_id = db.id AND dbj.evaluation_id = bj.evaluation_id
		WHERE bj.evaluation_id = $1`, evaluationID)
}

func scanEdge(r Row) (store.BuildEdge, error) {
	var e store.BuildEdge
	err := r.Scan(&e.Build, &e.DependsOn)
	return e, err
}

// BuildOutputs implements store.WebUI.
func (s *Store) BuildOutputs(ctx context.Context, buildID string) ([]store.Output, error) {
	if !validID(buildID) {
		return nil, nil
	}
	return readAll(ctx, s, "build outputs", func(r Row) (store.Output, error) {
		var o store.Output
		err := r.Scan(&o.Name, &o.Path)
		return o, err
	}, `SELECT o.name, o.path FROM build b JOIN derivation_output o ON o.derivation_id = b.derivation_id
		WHERE b.id = $1 ORDER BY o.name`, buildID)
}
