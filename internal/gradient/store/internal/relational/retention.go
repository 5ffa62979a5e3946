package relational

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// RetentionGraph implements store.Retention, in one read snapshot.
func (s *Store) RetentionGraph(ctx context.Context) (store.RetentionGraph, error) {
	var g store.RetentionGraph
	err := s.read(ctx, "retention graph", func(tx Tx) error {
		var err error
		if g.Evaluations, err = retainedEvaluations(ctx, tx); err != nil {
			return err
		}
		g.Paths, err = queryAll(ctx, tx, scanCachedPath, `SELECT `+anyCachedPathColumns+` FROM cached_path cp ORDER BY cp.store_hash`)
		return err
	})
	return g, err
}

// anyCachedPathColumns are cachedPathColumns for pending rows too: no file hash and size yet.
var anyCachedPathColumns = strings.Replace(strings.Replace(cachedPathColumns,
	"cp.file_hash,", "COALESCE(cp.file_hash, ''),", 1), "cp.file_size,", "COALESCE(cp.file_size, 0),", 1)

// retainedEvaluations reads every evaluation with its flake source and the .drv files and
// outputs of the builds it needs.
func retainedEvaluations(ctx context.Context, tx Tx) ([]store.RetainedEvaluation, error) {
	evals, err := queryAll(ctx, tx, func(r Row) (store.RetainedEvaluation, error) {
		var e store.RetainedEvaluation
		var created Timestamp
		var source string
		err := r.Scan(&e.ID, &e.ProjectID, &e.Branch, &e.Status, &created, &source)
		e.CreatedAt = created.Time
		if source != "" {
			e.StorePaths = []string{source}
		}
		return e, err
	}, `SELECT id, project_id, branch, status, created_at, COALESCE(flake_source, '') FROM evaluation ORDER BY id`)
	if err != nil {
		return nil, err
	}
	index := make(map[string]int, len(evals))
	for i, e := range evals {
		index[e.ID] = i
	}
	rows, err := tx.Query(ctx, `SELECT bj.evaluation_id, d.drv_path FROM build_job bj
			JOIN build b ON b.id = bj.build_id JOIN derivation d ON d.id = b.derivation_id
		UNION ALL
		SELECT bj.evaluation_id, o.path FROM build_job bj
			JOIN build b ON b.id = bj.build_id JOIN derivation_output o ON o.derivation_id = b.derivation_id`)
	if err != nil {
		return nil, err
	}
	err = scanPairs(rows, func(id, path string) {
		if i, ok := index[id]; ok {
			evals[i].StorePaths = append(evals[i].StorePaths, path)
		}
	})
	return evals, err
}

// DeleteCachedPaths implements store.Retention.
func (s *Store) DeleteCachedPaths(ctx context.Context, storeHashes []string) ([]string, error) {
	var out []string
	err := s.write(ctx, "delete cached paths", func(tx Tx) error {
		var err error
		out, err = deleteCachedRows(ctx, tx, storeHashes)
		return err
	})
	return out, err
}

// PruneEvaluations implements store.Retention.
func (s *Store) PruneEvaluations(ctx context.Context, before time.Time, keep []string) (int, error) {
	n := 0
	err := s.write(ctx, "prune evaluations", func(tx Tx) error {
		n = 0
		ids, err := queryStrings(ctx, tx, `SELECT id FROM evaluation WHERE created_at < $1 AND status IN ($2, $3, $4)
			ORDER BY id`, ts(before), store.EvalCompleted, store.EvalFailed, store.EvalAborted)
		if err != nil {
			return err
		}
		ids = without(ids, keep)
		for _, part := range chunks(ids, inChunk) {
			k, err := tx.Exec(ctx, `DELETE FROM evaluation WHERE id IN (`+placeholders(1, len(part))+`)`, stringArgs(part)...)
			if err != nil {
				return err
			}
			n += int(k)
		}
		return nil
	})
	return n, err
}

// PruneBuildLogs implements store.Retention.
func (s *Store) PruneBuildLogs(ctx context.Context, before time.Time, keep []string) (int, error) {
	n := 0
	err := s.write(ctx, "prune build logs", func(tx Tx) error {
		n = 0
		needed, err := buildsNeededBy(ctx, tx, keep)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT a.id, a.build_id FROM build_attempt a
			WHERE a.finished_at IS NOT NULL AND a.finished_at < $1
				AND EXISTS (SELECT 1 FROM build_log_chunk c WHERE c.attempt_id = a.id)
			ORDER BY a.id`, ts(before))
		if err != nil {
			return err
		}
		var attempts []string
		err = scanPairs(rows, func(attempt, build string) {
			if !needed[build] {
				attempts = append(attempts, attempt)
			}
		})
		if err != nil {
			return err
		}
		for _, part := range chunks(attempts, inChunk) {
			if _, err := tx.Exec(ctx, `DELETE FROM build_log_chunk WHERE attempt_id IN (`+placeholders(1, len(part))+`)`,
				stringArgs(part)...); err != nil {
				return err
			}
		}
		n = len(attempts)
		return nil
	})
	return n, err
}

// buildsNeededBy is the set of builds the evaluations need.
func buildsNeededBy(ctx context.Context, tx Tx, evaluations []string) (map[string]bool, error) {
	out := map[string]bool{}
	ids := slices.DeleteFunc(slices.Clone(evaluations), func(id string) bool { return !validID(id) })
	for _, part := range chunks(ids, inChunk) {
		builds, err := queryStrings(ctx, tx, `SELECT DISTINCT build_id FROM build_job
			WHERE evaluation_id IN (`+placeholders(1, len(part))+`)`, stringArgs(part)...)
		if err != nil {
			return nil, err
		}
		for _, b := range builds {
			out[b] = true
		}
	}
	return out, nil
}

// without is ids minus those in drop.
func without(ids, drop []string) []string {
	skip := make(map[string]bool, len(drop))
	for _, d := range drop {
		skip[d] = true
	}
	return slices.DeleteFunc(ids, func(id string) bool { return skip[id] })
}
