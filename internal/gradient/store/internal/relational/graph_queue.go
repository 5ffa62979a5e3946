package relational

import (
	"context"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// queueBatch links the batch's closure to the evaluation and sets the linked builds going:
// Aborted ones are revived, those needing a failed build fail, ready ones are queued.
func (s *Store) queueBatch(ctx context.Context, tx Tx, c *change, g *batchGraph) error {
	linked, err := linkClosure(ctx, tx, g.evalID, g.batch)
	if err != nil {
		return err
	}
	batchBuilds, err := buildsOf(ctx, tx, g.batch)
	if err != nil {
		return err
	}
	shared, err := linkForwardReferences(ctx, tx, g)
	if err != nil {
		return err
	}
	linked = append(linked, shared...)
	if err := reviveAborted(ctx, tx, c, linked); err != nil {
		return err
	}
	candidates := append(linked, batchBuilds...)
	if err := doomNeedingFailed(ctx, tx, c, candidates); err != nil {
		return err
	}
	return promoteReady(ctx, tx, c, candidates)
}

// linkClosure records that the evaluation needs the builds of the derivations and of their
// whole known closure (build_job), and returns the builds newly linked. The walk stops at
// derivations already linked to the evaluation: their closure was linked with them. Linking
// the closure is what lets an evaluation's status be derived from its own builds even when
// the worker skipped known subtrees (gradient-server §6.2 step 5).
func linkClosure(ctx context.Context, tx Tx, evalID string, derivationIDs []string) ([]string, error) {
	var out []string
	for _, part := range chunks(derivationIDs, inChunk) {
		args := append([]any{evalID}, stringArgs(part)...)
		ids, err := queryStrings(ctx, tx, `WITH RECURSIVE closure(id) AS (
				SELECT id FROM derivation WHERE id IN (`+placeholders(2, len(part))+`)
				UNION
				SELECT dd.depends_on_id FROM derivation_dependency dd JOIN closure c ON dd.derivation_id = c.id
				WHERE NOT EXISTS (SELECT 1 FROM build_job bj JOIN build lb ON lb.id = bj.build_id
					WHERE bj.evaluation_id = $1 AND lb.derivation_id = dd.depends_on_id))
			INSERT INTO build_job (evaluation_id, build_id)
			SELECT e.id, b.id FROM closure c JOIN build b ON b.derivation_id = c.id, evaluation e WHERE e.id = $1
			ON CONFLICT DO NOTHING
			RETURNING build_id`, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, ids...)
	}
	return out, nil
}

// linkForwardReferences links newly described derivations to the other unfinished
// evaluations whose builds already depend on them: another evaluation may have named the
// derivation as a forward reference that this batch is first to describe.
func linkForwardReferences(ctx context.Context, tx Tx, g *batchGraph) ([]string, error) {
	var fresh []string
	for _, d := range g.fresh {
		fresh = append(fresh, g.ids[d.DrvPath])
	}
	var pairs [][2]string
	for _, part := range chunks(fresh, inChunk) {
		rows, err := tx.Query(ctx, `SELECT DISTINCT bj.evaluation_id, dd.depends_on_id FROM derivation_dependency dd
			JOIN build b ON b.derivation_id = dd.derivation_id
			JOIN build_job bj ON bj.build_id = b.id
			JOIN evaluation e ON e.id = bj.evaluation_id
			WHERE dd.depends_on_id IN (`+placeholders(2, len(part))+`) AND bj.evaluation_id <> $1 AND e.status NOT IN (5, 6, 7)`,
			append([]any{g.evalID}, stringArgs(part)...)...)
		if err != nil {
			return nil, err
		}
		if err := scanPairs(rows, func(e, d string) { pairs = append(pairs, [2]string{e, d}) }); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, p := range pairs {
		ids, err := linkClosure(ctx, tx, p[0], []string{p[1]})
		if err != nil {
			return nil, err
		}
		out = append(out, ids...)
	}
	return out, nil
}

func buildsOf(ctx context.Context, tx Tx, derivationIDs []string) ([]string, error) {
	var out []string
	for _, part := range chunks(derivationIDs, inChunk) {
		ids, err := queryStrings(ctx, tx, `SELECT id FROM build WHERE derivation_id IN (`+placeholders(1, len(part))+`)`,
			stringArgs(part)...)
		if err != nil {
			return nil, err
		}
		out = append(out, ids...)
	}
	return out, nil
}

// reviveAborted resets Aborted builds a new evaluation needs to Created, with fresh counters:
// an abort stops work for the evaluations that had it, not for every later one.
func reviveAborted(ctx context.Context, tx Tx, c *change, buildIDs []string) error {
	for _, part := range chunks(buildIDs, inChunk) {
		args := append([]any{c.now}, stringArgs(part)...)
		ids, err := queryStrings(ctx, tx, `UPDATE build SET status = 0, attempt = 0, lost_worker_streak = 0, inputs_loops = 0,
				not_before = NULL, updated_at = $1
			WHERE status = 5 AND id IN (`+placeholders(2, len(part))+`) RETURNING id`, args...)
		if err != nil {
			return err
		}
		for _, id := range ids {
			c.build(id, store.BuildCreated, time.Time{})
		}
	}
	return nil
}

// doomNeedingFailed fails (DependencyFailed) the Created builds among buildIDs that need a
// build that failed for good, and everything needing them (gradient-server §6.4 cascade, for
// builds that arrive after the failure).
func doomNeedingFailed(ctx context.Context, tx Tx, c *change, buildIDs []string) error {
	var doomed []string
	for _, part := range chunks(buildIDs, inChunk) {
		args := append([]any{c.now}, stringArgs(part)...)
		rows, err := tx.Query(ctx, `UPDATE build SET status = 6, updated_at = $1
			WHERE status = 0 AND id IN (`+placeholders(2, len(part))+`)
				AND EXISTS (SELECT 1 FROM derivation_dependency dd JOIN build db ON db.derivation_id = dd.depends_on_id
					WHERE dd.derivation_id = build.derivation_id AND db.status IN (4, 6, 9))
			RETURNING id, derivation_id`, args...)
		if err != nil {
			return err
		}
		err = scanPairs(rows, func(id, derivationID string) {
			c.build(id, store.BuildDependencyFailed, time.Time{})
			doomed = append(doomed, derivationID)
		})
		if err != nil {
			return err
		}
	}
	return cascadeDependencyFailed(ctx, tx, c, doomed)
}

// KnownDerivations implements store.Evaluations: described derivations with no undescribed
// stub anywhere in their closure.
func (s *Store) KnownDerivations(ctx context.Context, drvPaths []string) ([]string, error) {
	var out []string
	err := s.read(ctx, "known derivations", func(tx Tx) error {
		out = nil
		for _, part := range chunks(drvPaths, inChunk) {
			known, err := queryStrings(ctx, tx, `WITH RECURSIVE incomplete(id) AS (
					SELECT id FROM derivation WHERE system IS NULL
					UNION
					SELECT dd.derivation_id FROM derivation_dependency dd JOIN incomplete i ON dd.depends_on_id = i.id)
				SELECT drv_path FROM derivation WHERE drv_path IN (`+placeholders(1, len(part))+`)
					AND system IS NOT NULL AND id NOT IN (SELECT id FROM incomplete)
				ORDER BY drv_path`, stringArgs(part)...)
			if err != nil {
				return err
			}
			out = append(out, known...)
		}
		return nil
	})
	return out, err
}
