package relational

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// EvaluationBuildCounts implements store.WebUI.
func (s *Store) EvaluationBuildCounts(ctx context.Context, evaluationID string) (map[store.BuildStatus]int, error) {
	out := map[store.BuildStatus]int{}
	if !validID(evaluationID) {
		return out, nil
	}
	err := s.read(ctx, "evaluation build counts", func(tx Tx) error {
		clear(out)
		rows, err := tx.Query(ctx, `SELECT b.status, COUNT(*) FROM build_job bj JOIN build b ON b.id = bj.build_id
			WHERE bj.evaluation_id = $1 GROUP BY b.status`, evaluationID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var status, n int
			if err := rows.Scan(&status, &n); err != nil {
				return err
			}
			out[store.BuildStatus(status)] = n
		}
		return rows.Err()
	})
	return out, err
}

// EvaluationBuildsPage implements store.WebUI.
func (s *Store) EvaluationBuildsPage(ctx context.Context, q store.BuildPage) ([]store.BuildInfo, error) {
	if !validID(q.EvaluationID) {
		return nil, nil
	}
	if q.Limit <= 0 {
		q.Limit = 100
	}
	q.Limit, q.Offset = min(q.Limit, 1000), max(q.Offset, 0)
	filter := ""
	if len(q.Statuses) > 0 {
		codes := make([]string, len(q.Statuses))
		for i, st := range q.Statuses {
			codes[i] = strconv.Itoa(int(st)) // our own small integers, never input text
		}
		filter = ` AND b.status IN (` + strings.Join(codes, ", ") + `)`
	}
	var out []store.BuildInfo
	err := s.read(ctx, "evaluation builds page", func(tx Tx) error {
		var err error
		out, err = queryAll(ctx, tx, scanBuildInfo, buildInfoSelect+` JOIN build_job bj ON bj.build_id = b.id
			WHERE bj.evaluation_id = $1`+filter+` ORDER BY d.pname, d.drv_path LIMIT $2 OFFSET $3`, q.EvaluationID, q.Limit, q.Offset)
		if err != nil || len(out) == 0 {
			return err
		}
		return addEntryPoints(ctx, tx, q.EvaluationID, out)
	})
	return out, err
}

// addEntryPoints fills in the evaluation's attrs of a page of builds.
func addEntryPoints(ctx context.Context, tx Tx, evalID string, builds []store.BuildInfo) error {
	at := map[string][]int{}
	ids := make([]string, 0, len(builds))
	for i, b := range builds {
		builds[i].EntryPoints = nil
		at[b.DerivationID] = append(at[b.DerivationID], i)
		ids = append(ids, b.DerivationID)
	}
	rows, err := tx.Query(ctx, `SELECT derivation_id, attr FROM entry_point WHERE evaluation_id = $1
		AND derivation_id IN (`+placeholders(2, len(ids))+`) ORDER BY attr`, append([]any{evalID}, stringArgs(ids)...)...)
	if err != nil {
		return err
	}
	return scanPairs(rows, func(d, attr string) {
		for _, i := range at[d] {
			builds[i].EntryPoints = append(builds[i].EntryPoints, attr)
		}
	})
}
