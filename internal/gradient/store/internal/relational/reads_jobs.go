package relational

import (
	"context"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

const evaluationColumns = `id, project_id, commit_sha, wildcards, status, COALESCE(flake_source, ''), attempts,
	eval_dispatches, created_at, updated_at, branch`

func scanEvaluation(r Row) (store.Evaluation, error) {
	var e store.Evaluation
	var wildcards string
	var status int
	var created, updated Timestamp
	if err := r.Scan(&e.ID, &e.ProjectID, &e.Commit, &wildcards, &status, &e.FlakeSource, &e.Attempts,
		&e.EvalDispatches, &created, &updated, &e.Branch); err != nil {
		return e, err
	}
	e.Status, e.CreatedAt, e.UpdatedAt = store.EvaluationStatus(status), created.Time, updated.Time
	var err error
	e.Wildcards, err = decodeList(wildcards)
	return e, err
}

// GetEvaluation implements store.Reads.
func (s *Store) GetEvaluation(ctx context.Context, id string) (store.Evaluation, error) {
	if !validID(id) {
		return store.Evaluation{}, notFound(ErrNoRows, "evaluation", id)
	}
	var out store.Evaluation
	err := s.read(ctx, "get evaluation", func(tx Tx) error {
		var err error
		out, err = scanEvaluation(tx.QueryRow(ctx, `SELECT `+evaluationColumns+` FROM evaluation WHERE id = $1`, id))
		return notFound(err, "evaluation", id)
	})
	return out, err
}

// ListEvaluations implements store.Reads.
func (s *Store) ListEvaluations(ctx context.Context, projectID string, limit int) ([]store.Evaluation, error) {
	if !validID(projectID) {
		return nil, nil
	}
	if limit <= 0 {
		limit = 100
	}
	return readAll(ctx, s, "list evaluations", scanEvaluation, `SELECT `+evaluationColumns+` FROM evaluation
		WHERE project_id = $1 ORDER BY id DESC LIMIT $2`, projectID, limit)
}

// EvaluationMessages implements store.Reads.
func (s *Store) EvaluationMessages(ctx context.Context, evaluationID string) ([]store.Message, error) {
	if !validID(evaluationID) {
		return nil, nil
	}
	return readAll(ctx, s, "evaluation messages", scanMessage, `SELECT level, source, message, created_at
		FROM evaluation_message WHERE evaluation_id = $1 ORDER BY id`, evaluationID)
}

func scanMessage(r Row) (store.Message, error) {
	var m store.Message
	var level int
	var created Timestamp
	err := r.Scan(&level, &m.Source, &m.Text, &created)
	m.Level, m.CreatedAt = store.MessageLevel(level), created.Time
	return m, err
}

const buildInfoSelect = `SELECT b.id, d.id, d.drv_path, COALESCE(d.system, ''), d.pname, b.status, b.attempt,
	b.lost_worker_streak, b.substituted, b.not_before, b.queued_at, b.dispatched_at, b.updated_at
	FROM build b JOIN derivation d ON d.id = b.derivation_id`

func scanBuildInfo(r Row) (store.BuildInfo, error) {
	var b store.BuildInfo
	var status int
	var notBefore, queued, dispatched, updated Timestamp
	err := r.Scan(&b.ID, &b.DerivationID, &b.DrvPath, &b.System, &b.Pname, &status, &b.Attempt, &b.LostWorkerStreak,
		&b.Substituted, &notBefore, &queued, &dispatched, &updated)
	b.Status = store.BuildStatus(status)
	b.NotBefore, b.QueuedAt, b.DispatchedAt, b.UpdatedAt = notBefore.Time, queued.Time, dispatched.Time, updated.Time
	return b, err
}

// GetBuild implements store.Reads.
func (s *Store) GetBuild(ctx context.Context, id string) (store.BuildInfo, error) {
	if !validID(id) {
		return store.BuildInfo{}, notFound(ErrNoRows, "build", id)
	}
	var out store.BuildInfo
	err := s.read(ctx, "get build", func(tx Tx) error {
		var err error
		out, err = scanBuildInfo(tx.QueryRow(ctx, buildInfoSelect+` WHERE b.id = $1`, id))
		return notFound(err, "build", id)
	})
	return out, err
}

// EvaluationBuilds implements store.Reads.
func (s *Store) EvaluationBuilds(ctx context.Context, evaluationID string) ([]store.BuildInfo, error) {
	if !validID(evaluationID) {
		return nil, nil
	}
	var out []store.BuildInfo
	err := s.read(ctx, "evaluation builds", func(tx Tx) error {
		out = nil
		attrs := map[string][]string{}
		r, err := tx.Query(ctx, `SELECT derivation_id, attr FROM entry_point WHERE evaluation_id = $1 ORDER BY attr`, evaluationID)
		if err != nil {
			return err
		}
		if err := scanPairs(r, func(d, attr string) { attrs[d] = append(attrs[d], attr) }); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, buildInfoSelect+` JOIN build_job bj ON bj.build_id = b.id
			WHERE bj.evaluation_id = $1 ORDER BY d.drv_path`, evaluationID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			b, err := scanBuildInfo(rows)
			if err != nil {
				return err
			}
			b.EntryPoints = attrs[b.DerivationID]
			out = append(out, b)
		}
		return rows.Err()
	})
	return out, err
}

// BuildAttempts implements store.Reads.
func (s *Store) BuildAttempts(ctx context.Context, buildID string) ([]store.Attempt, error) {
	if !validID(buildID) {
		return nil, nil
	}
	return readAll(ctx, s, "build attempts", scanAttempt,
		`SELECT `+attemptColumns+` FROM build_attempt WHERE build_id = $1 ORDER BY started_at, id`, buildID)
}

// maxLogRead bounds one ReadBuildLog answer.
const maxLogRead = 16 << 20

// ReadBuildLog implements store.Reads.
func (s *Store) ReadBuildLog(ctx context.Context, attemptID string, offset int64, max int) ([]byte, error) {
	if !validID(attemptID) || offset < 0 {
		return nil, nil
	}
	if max <= 0 || max > maxLogRead {
		max = maxLogRead
	}
	var out []byte
	err := s.read(ctx, "read build log", func(tx Tx) error {
		out = nil
		rows, err := tx.Query(ctx, `SELECT byte_offset, data FROM build_log_chunk WHERE attempt_id = $1
				AND byte_offset >= COALESCE((SELECT MAX(byte_offset) FROM build_log_chunk
					WHERE attempt_id = $1 AND byte_offset <= $2), 0)
				AND byte_offset < $3
			ORDER BY byte_offset`, attemptID, offset, offset+int64(max))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var at int64
			var data []byte
			if err := rows.Scan(&at, &data); err != nil {
				return err
			}
			out = appendWindow(out, data, at, offset, max)
		}
		return rows.Err()
	})
	return out, err
}

// appendWindow appends the part of a chunk at byte offset at that lies in [offset, offset+max).
func appendWindow(out, data []byte, at, offset int64, max int) []byte {
	if skip := offset - at; skip > 0 {
		if skip >= int64(len(data)) {
			return out
		}
		data = data[skip:]
	}
	if room := max - len(out); len(data) > room {
		data = data[:room]
	}
	return append(out, data...)
}

// OpenAssignments implements store.Reads.
func (s *Store) OpenAssignments(ctx context.Context, workerID string) ([]store.OpenAssignment, error) {
	return readAll(ctx, s, "open assignments", scanOpenAssignment, `SELECT id, kind, COALESCE(evaluation_id, build_id), worker_id
		FROM dispatched_job WHERE finished_at IS NULL AND ($1 = '' OR worker_id = $1) ORDER BY dispatched_at, id`, workerID)
}

func scanOpenAssignment(r Row) (store.OpenAssignment, error) {
	var a store.OpenAssignment
	var kind int
	err := r.Scan(&a.AssignmentID, &kind, &a.Job.ID, &a.WorkerID)
	a.Job.Kind = store.JobKind(kind)
	return a, err
}
