package relational

import (
	"context"
	"fmt"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// SetStatusConfig implements store.Statuses.
func (s *Store) SetStatusConfig(ctx context.Context, c store.StatusConfig) error {
	return s.write(ctx, "set status config", func(tx Tx) error {
		if err := mustExist(ctx, tx, "project", c.ProjectID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO project_status (project_id, forge, api_url, repo, token_enc, per_build,
				notify_url, notify_secret_enc, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (project_id) DO UPDATE SET forge = excluded.forge, api_url = excluded.api_url,
				repo = excluded.repo, token_enc = excluded.token_enc, per_build = excluded.per_build,
				notify_url = excluded.notify_url, notify_secret_enc = excluded.notify_secret_enc,
				updated_at = excluded.updated_at`,
			c.ProjectID, c.Forge, c.APIURL, c.Repo, nilIfEmpty(c.TokenEnc), c.PerBuild, c.NotifyURL,
			nilIfEmpty(c.NotifySecretEnc), s.clock())
		return err
	})
}

// GetStatusConfig implements store.Statuses.
func (s *Store) GetStatusConfig(ctx context.Context, projectID string) (store.StatusConfig, error) {
	var c store.StatusConfig
	err := s.read(ctx, "get status config", func(tx Tx) error {
		if !validID(projectID) {
			return notFound(ErrNoRows, "status config of project", projectID)
		}
		var updated Timestamp
		err := tx.QueryRow(ctx, `SELECT project_id, forge, api_url, repo, token_enc, per_build, notify_url,
				notify_secret_enc, updated_at FROM project_status WHERE project_id = $1`, projectID).
			Scan(&c.ProjectID, &c.Forge, &c.APIURL, &c.Repo, &c.TokenEnc, &c.PerBuild, &c.NotifyURL, &c.NotifySecretEnc, &updated)
		c.UpdatedAt = updated.Time
		return notFound(err, "status config of project", projectID)
	})
	return c, err
}

const outboxColumns = `o.id, o.evaluation_id, e.project_id, p.name, e.commit_sha, COALESCE(CAST(o.build_id AS TEXT), ''),
	o.attr, o.sink, o.context, o.state, o.description, o.attempts, o.next_at, o.outcome, o.last_error, o.last_http,
	o.delivered_at, o.created_at`

const outboxFrom = ` FROM status_outbox o JOIN evaluation e ON e.id = o.evaluation_id JOIN project p ON p.id = e.project_id`

func scanOutgoing(r Row) (store.OutgoingStatus, error) {
	var o store.OutgoingStatus
	var next, delivered, created Timestamp
	err := r.Scan(&o.ID, &o.EvaluationID, &o.ProjectID, &o.ProjectName, &o.Commit, &o.BuildID, &o.Attr, &o.Sink,
		&o.Context, &o.State, &o.Description, &o.Attempts, &next, &o.Outcome, &o.LastError, &o.LastHTTP, &delivered, &created)
	o.NextAt, o.DeliveredAt, o.CreatedAt = next.Time, delivered.Time, created.Time
	return o, err
}

// DueStatuses implements store.Statuses.
func (s *Store) DueStatuses(ctx context.Context, limit int) ([]store.OutgoingStatus, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	return readAll(ctx, s, "due statuses", scanOutgoing, `SELECT `+outboxColumns+outboxFrom+`
		WHERE o.outcome = '' AND o.next_at <= $1 ORDER BY o.id LIMIT $2`, s.clock(), limit)
}

// EvaluationStatuses implements store.Statuses.
func (s *Store) EvaluationStatuses(ctx context.Context, evaluationID string) ([]store.OutgoingStatus, error) {
	if !validID(evaluationID) {
		return nil, nil
	}
	return readAll(ctx, s, "evaluation statuses", scanOutgoing, `SELECT `+outboxColumns+outboxFrom+`
		WHERE o.evaluation_id = $1 ORDER BY o.id`, evaluationID)
}

// RecordStatusAttempt implements store.Statuses. A row superseded meanwhile keeps that
// outcome; only its attempt count and error are updated.
func (s *Store) RecordStatusAttempt(ctx context.Context, id string, a store.StatusAttempt) error {
	switch a.Outcome {
	case store.StatusQueued, store.StatusDelivered, store.StatusFailed:
	default:
		return fmt.Errorf("record status attempt: outcome %q: %w", a.Outcome, store.ErrInvalid)
	}
	return s.write(ctx, "record status attempt", func(tx Tx) error {
		if err := mustExist(ctx, tx, "status_outbox", id); err != nil {
			return err
		}
		now := s.clock()
		var delivered any
		if a.Outcome == store.StatusDelivered {
			delivered = now
		}
		next := a.NextAt
		if next.IsZero() {
			next = now
		}
		_, err := tx.Exec(ctx, `UPDATE status_outbox SET attempts = $2, last_error = $3, last_http = $4, next_at = $5,
				delivered_at = $6, outcome = CASE WHEN outcome = '' THEN $7 ELSE outcome END WHERE id = $1`,
			id, a.Attempts, a.Error, a.HTTP, next.UTC().Truncate(time.Microsecond), delivered, a.Outcome)
		return err
	})
}
