package relational

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// Candidate pages: the first is small (a worker that can run the oldest builds needs only
// a few rows), later ones grow to maxCandidatePage.
const (
	minCandidatePage = 16
	maxCandidatePage = 256
)

// nilUUID sorts before every UUID in both backends: the keyset start.
const nilUUID = "00000000-0000-0000-0000-000000000000"

// Candidates implements store.Dispatch.
func (s *Store) Candidates(ctx context.Context, q store.CandidateQuery) ([]store.Candidate, error) {
	projects := slices.DeleteFunc(slices.Clone(q.Projects), func(id string) bool { return !validID(id) })
	if len(projects) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 3
	}
	var out []store.Candidate
	err := s.read(ctx, "candidates", func(tx Tx) error {
		var err error
		if q.Kind == store.JobEval {
			out, err = evalCandidates(ctx, tx, projects, limit)
		} else {
			out, err = buildCandidates(ctx, tx, q, projects, limit, s.clock())
		}
		return err
	})
	return out, err
}

func evalCandidates(ctx context.Context, tx Tx, projects []string, limit int) ([]store.Candidate, error) {
	args := append(stringArgs(projects), limit)
	ids, err := queryStrings(ctx, tx, `SELECT e.id FROM evaluation e
		WHERE e.status = 0 AND e.project_id IN (`+placeholders(1, len(projects))+`)
			AND NOT EXISTS (SELECT 1 FROM dispatched_job dj WHERE dj.evaluation_id = e.id AND dj.finished_at IS NULL)
		ORDER BY e.id LIMIT $`+fmt.Sprint(len(projects)+1), args...)
	out := make([]store.Candidate, len(ids))
	for i, id := range ids {
		out[i] = store.Candidate{Job: store.EvalJob(id)}
	}
	return out, err
}

// buildCandidates pages through startable builds in ID order and keeps those the worker's
// projects, systems and features allow, until limit are found. Each page is an ordered
// index range of the partial index build_startable, limited before any join, so its cost
// does not depend on the planner's row estimates (PostgreSQL may not have analyzed a
// freshly filled queue yet).
func buildCandidates(ctx context.Context, tx Tx, q store.CandidateQuery, projects []string, limit int, now time.Time) ([]store.Candidate, error) {
	systems := append([]string{"builtin"}, q.Systems...)
	var out []store.Candidate
	after, page := nilUUID, max(minCandidatePage, 4*limit)
	for {
		rows, err := scanCandidatePage(ctx, tx, systems, projects, now, after, page)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.eligible && subset(r.RequiredFeatures, q.Features) {
				out = append(out, r.Candidate)
				if len(out) == limit {
					return out, nil
				}
			}
		}
		if len(rows) < page {
			return out, nil
		}
		after, page = rows[len(rows)-1].Job.ID, min(maxCandidatePage, page*4)
	}
}

type candidateRow struct {
	store.Candidate
	eligible bool // system and project match
}

func scanCandidatePage(ctx context.Context, tx Tx, systems, projects []string, now time.Time, after string, page int) ([]candidateRow, error) {
	query := `SELECT b.id, d.system, d.required_features,
			(d.system IN (` + placeholders(4, len(systems)) + `) AND EXISTS (
				SELECT 1 FROM build_job bj JOIN evaluation e ON e.id = bj.evaluation_id
				WHERE bj.build_id = b.id AND e.project_id IN (` + placeholders(4+len(systems), len(projects)) + `)))
		FROM (SELECT id, derivation_id FROM build
			WHERE status IN (1, 8) AND (not_before IS NULL OR not_before <= $1) AND id > $2
			ORDER BY id LIMIT $3) b
		JOIN derivation d ON d.id = b.derivation_id
		ORDER BY b.id`
	args := append(append([]any{now, after, page}, stringArgs(systems)...), stringArgs(projects)...)
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []candidateRow
	for rows.Next() {
		var r candidateRow
		var features string
		if err := rows.Scan(&r.Job.ID, &r.System, &features, &r.eligible); err != nil {
			return nil, err
		}
		r.Job.Kind = store.JobBuild
		if r.RequiredFeatures, err = decodeList(features); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func subset(need, have []string) bool {
	for _, f := range need {
		if !slices.Contains(have, f) {
			return false
		}
	}
	return true
}

// Claim implements store.Dispatch.
func (s *Store) Claim(ctx context.Context, job store.JobRef, workerID string) (store.Assignment, error) {
	if !validID(job.ID) || workerID == "" {
		return store.Assignment{}, fmt.Errorf("claim %s: %w", job, store.ErrLostRace)
	}
	var out store.Assignment
	err := s.write(ctx, "claim "+job.String(), func(tx Tx) error {
		now := s.clock()
		out = store.Assignment{ID: newID(), Job: job, WorkerID: workerID, DispatchedAt: now}
		if job.Kind == store.JobEval {
			return claimEval(ctx, tx, &out)
		}
		return claimBuild(ctx, tx, &out)
	})
	return out, err
}

func claimEval(ctx context.Context, tx Tx, a *store.Assignment) error {
	n, err := tx.Exec(ctx, `UPDATE evaluation SET eval_dispatches = eval_dispatches + 1, updated_at = $2
		WHERE id = $1 AND status = 0
			AND NOT EXISTS (SELECT 1 FROM dispatched_job dj WHERE dj.evaluation_id = $1 AND dj.finished_at IS NULL)`,
		a.Job.ID, a.DispatchedAt)
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrLostRace
	}
	if err := insertAssignment(ctx, tx, a); err != nil {
		return err
	}
	a.Eval, err = evalAssignment(ctx, tx, a.Job.ID)
	return err
}

func claimBuild(ctx context.Context, tx Tx, a *store.Assignment) error {
	n, err := tx.Exec(ctx, `UPDATE build SET status = 2, dispatched_at = $2, not_before = NULL, updated_at = $2
		WHERE id = $1 AND status IN (1, 8) AND (not_before IS NULL OR not_before <= $2)`, a.Job.ID, a.DispatchedAt)
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrLostRace
	}
	if err := insertAssignment(ctx, tx, a); err != nil {
		return err
	}
	a.Build, err = buildAssignment(ctx, tx, a.Job.ID)
	return err
}

// insertAssignment inserts the dispatched_job row. The partial unique indexes allow one open
// assignment per job; a conflict means another claimer won.
func insertAssignment(ctx context.Context, tx Tx, a *store.Assignment) error {
	var evalID, buildID any
	if a.Job.Kind == store.JobEval {
		evalID = a.Job.ID
	} else {
		buildID = a.Job.ID
	}
	n, err := tx.Exec(ctx, `INSERT INTO dispatched_job (id, kind, job_id, evaluation_id, build_id, worker_id, dispatched_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
		a.ID, int(a.Job.Kind), a.Job.String(), evalID, buildID, a.WorkerID, a.DispatchedAt)
	if err == nil && n == 0 {
		err = store.ErrLostRace
	}
	return err
}

func evalAssignment(ctx context.Context, tx Tx, evalID string) (*store.EvalAssignment, error) {
	e := &store.EvalAssignment{EvaluationID: evalID}
	var wildcards string
	err := tx.QueryRow(ctx, `SELECT e.project_id, p.repo_url, p.branch, e.commit_sha, e.wildcards,
			COALESCE(e.flake_source, ''), p.ssh_key_enc
		FROM evaluation e JOIN project p ON p.id = e.project_id WHERE e.id = $1`, evalID).
		Scan(&e.ProjectID, &e.RepoURL, &e.Branch, &e.Commit, &wildcards, &e.FlakeSource, &e.SSHKeyEnc)
	if err != nil {
		return nil, err
	}
	e.Wildcards, err = decodeList(wildcards)
	return e, err
}

func buildAssignment(ctx context.Context, tx Tx, buildID string) (*store.BuildAssignment, error) {
	b := &store.BuildAssignment{BuildID: buildID}
	var features string
	var timeout, silent *int64
	err := tx.QueryRow(ctx, `SELECT d.drv_path, d.system, d.required_features, d.is_fixed_output,
			d.prefer_local_build, d.allow_substitutes, b.timeout_secs, b.max_silent_secs, b.attempt
		FROM build b JOIN derivation d ON d.id = b.derivation_id WHERE b.id = $1`, buildID).
		Scan(&b.DrvPath, &b.System, &features, &b.IsFixedOutput, &b.PreferLocalBuild,
			&b.AllowSubstitutes, &timeout, &silent, &b.Attempt)
	if err != nil {
		return nil, err
	}
	b.TimeoutSecs, b.MaxSilentSecs = unsignedPtr(timeout), unsignedPtr(silent)
	if b.RequiredFeatures, err = decodeList(features); err != nil {
		return nil, err
	}
	b.Outputs, err = outputsOfBuild(ctx, tx, buildID)
	return b, err
}

func outputsOfBuild(ctx context.Context, tx Tx, buildID string) ([]store.Output, error) {
	return queryAll(ctx, tx, func(r Row) (store.Output, error) {
		var o store.Output
		err := r.Scan(&o.Name, &o.Path)
		return o, err
	}, `SELECT o.name, o.path FROM derivation_output o JOIN build b ON b.derivation_id = o.derivation_id
		WHERE b.id = $1 ORDER BY o.name`, buildID)
}

func unsignedPtr(v *int64) *uint64 {
	if v == nil {
		return nil
	}
	u := uint64(*v)
	return &u
}

// DeclineAssignment implements store.Dispatch.
func (s *Store) DeclineAssignment(ctx context.Context, assignmentID string) (store.Effects, error) {
	var out store.Effects
	err := s.write(ctx, "decline assignment", func(tx Tx) error {
		c := s.newChange()
		a, err := anyOpenAssignment(ctx, tx, assignmentID)
		if err != nil {
			return err
		}
		if err := closeAssignment(ctx, tx, a.id, store.OutcomeDeclined, c.now); err != nil {
			return err
		}
		if a.kind == store.JobEval {
			err = requeueDeclinedEval(ctx, tx, c, a)
		} else {
			err = requeueDeclinedBuild(ctx, tx, c, a)
		}
		out = c.Effects
		return err
	})
	return out, err
}

func requeueDeclinedEval(ctx context.Context, tx Tx, c *change, a assignment) error {
	_, err := tx.Exec(ctx, `UPDATE evaluation SET eval_dispatches = eval_dispatches - 1, updated_at = $2
		WHERE id = $1 AND eval_dispatches > 0`, a.evalID, c.now)
	c.requeued(a.job())
	return err
}

func requeueDeclinedBuild(ctx context.Context, tx Tx, c *change, a assignment) error {
	if err := closeAttempt(ctx, tx, a.id, store.AttemptAborted, "declined", c.now); err != nil {
		return err
	}
	n, err := tx.Exec(ctx, `UPDATE build SET status = 1, queued_at = $2, updated_at = $2 WHERE id = $1 AND status = 2`,
		a.buildID, c.now)
	if err == nil && n == 1 {
		c.requeued(a.job())
		c.build(a.buildID, store.BuildQueued, time.Time{})
	}
	return err
}
