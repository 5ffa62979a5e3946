package relational

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// The trigger tables of gradient-server §11: project_trigger (settings) and trigger_head
// (heads seen).

const triggerColumns = `branches, tags, poll, webhook_secret_enc, last_poll_at, last_poll_error`

func scanTriggers(r Row) (store.TriggerSettings, error) {
	var t store.TriggerSettings
	var branches string
	var polled Timestamp
	if err := r.Scan(&branches, &t.Tags, &t.Poll, &t.WebhookSecretEnc, &polled, &t.LastPollError); err != nil {
		return t, err
	}
	t.LastPollAt = polled.Time
	var err error
	t.Branches, err = decodeList(branches)
	return t, err
}

// projectTriggers reads a project's settings, the defaults without a row.
func projectTriggers(ctx context.Context, tx Tx, projectID string) (store.TriggerSettings, error) {
	if err := mustExist(ctx, tx, "project", projectID); err != nil {
		return store.TriggerSettings{}, err
	}
	t, err := scanTriggers(tx.QueryRow(ctx, `SELECT `+triggerColumns+` FROM project_trigger WHERE project_id = $1`, projectID))
	if errors.Is(err, ErrNoRows) {
		return store.TriggerSettings{}, nil
	}
	return t, err
}

// ProjectTriggers implements store.Triggers.
func (s *Store) ProjectTriggers(ctx context.Context, projectID string) (store.TriggerSettings, error) {
	var out store.TriggerSettings
	err := s.read(ctx, "project triggers", func(tx Tx) error {
		var err error
		out, err = projectTriggers(ctx, tx, projectID)
		return err
	})
	return out, err
}

// SetProjectTriggers implements store.Triggers.
func (s *Store) SetProjectTriggers(ctx context.Context, projectID string, u store.TriggerUpdate) error {
	return s.write(ctx, "set project triggers", func(tx Tx) error {
		t, err := projectTriggers(ctx, tx, projectID)
		if err != nil {
			return err
		}
		if u.Branches != nil {
			t.Branches = *u.Branches
		}
		if u.Tags != nil {
			t.Tags = *u.Tags
		}
		if u.Poll != nil {
			t.Poll = *u.Poll
		}
		if u.ClearSecret {
			t.WebhookSecretEnc = nil
		}
		if u.WebhookSecretEnc != nil {
			t.WebhookSecretEnc = u.WebhookSecretEnc
		}
		_, err = tx.Exec(ctx, `INSERT INTO project_trigger (project_id, branches, tags, poll, webhook_secret_enc)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (project_id) DO UPDATE SET branches = excluded.branches, tags = excluded.tags,
				poll = excluded.poll, webhook_secret_enc = excluded.webhook_secret_enc`,
			projectID, encodeList(t.Branches), t.Tags, t.Poll, nilIfEmpty(t.WebhookSecretEnc))
		return err
	})
}

// PollTargets implements store.Triggers.
func (s *Store) PollTargets(ctx context.Context) ([]store.PollTarget, error) {
	return readAll(ctx, s, "poll targets", func(r Row) (store.PollTarget, error) {
		var pt store.PollTarget
		var wildcards, branches string
		var created, polled Timestamp
		t := &pt.Settings
		err := r.Scan(&pt.Project.ID, &pt.Project.Name, &pt.Project.RepoURL, &pt.Project.Branch, &wildcards,
			&pt.Project.HasSSHKey, &pt.Project.ForceEvaluation, &created,
			&branches, &t.Tags, &t.Poll, &t.WebhookSecretEnc, &polled, &t.LastPollError)
		if err != nil {
			return pt, err
		}
		pt.Project.CreatedAt, t.LastPollAt = created.Time, polled.Time
		if pt.Project.Wildcards, err = decodeList(wildcards); err != nil {
			return pt, err
		}
		t.Branches, err = decodeList(branches)
		return pt, err
	}, `SELECT p.id, p.name, p.repo_url, p.branch, p.wildcards, p.ssh_key_enc IS NOT NULL, p.force_evaluation,
			p.created_at, t.branches, t.tags, t.poll, t.webhook_secret_enc, t.last_poll_at, t.last_poll_error
		FROM project_trigger t JOIN project p ON p.id = t.project_id WHERE t.poll ORDER BY p.name`)
}

// RecordPoll implements store.Triggers.
func (s *Store) RecordPoll(ctx context.Context, projectID string, at time.Time, pollErr string) error {
	return s.write(ctx, "record poll", func(tx Tx) error {
		if !validID(projectID) {
			return notFound(ErrNoRows, "project", projectID)
		}
		_, err := tx.Exec(ctx, `UPDATE project_trigger SET last_poll_at = $2, last_poll_error = $3 WHERE project_id = $1`,
			projectID, ts(at), pollErr)
		return err
	})
}

// TriggerEvaluation implements store.Triggers.
func (s *Store) TriggerEvaluation(ctx context.Context, t store.NewTrigger) (store.TriggerResult, error) {
	var out store.TriggerResult
	err := s.write(ctx, "trigger evaluation", func(tx Tx) error {
		out = store.TriggerResult{}
		p, err := getProject(ctx, tx, t.ProjectID)
		if err != nil {
			return err
		}
		now := s.clock()
		e := store.Evaluation{ID: newID(), ProjectID: p.ID, Commit: t.Commit, Branch: t.Branch, Wildcards: p.Wildcards,
			Status: store.EvalQueued, CreatedAt: now, UpdatedAt: now}
		fresh, err := recordHead(ctx, tx, t, e.ID, now)
		if err != nil {
			return err
		}
		if !fresh {
			var id *string
			err := tx.QueryRow(ctx, `SELECT evaluation_id FROM trigger_head WHERE project_id = $1 AND commit_sha = $2`,
				t.ProjectID, t.Commit).Scan(&id)
			if id != nil {
				out.EvaluationID = *id
			}
			return err
		}
		out = store.TriggerResult{EvaluationID: e.ID, Created: true}
		return insertEvaluation(ctx, tx, e)
	})
	return out, err
}

// recordHead marks a project's head seen, naming the evaluation it starts; fresh is false
// when it was seen before (and nothing changes).
func recordHead(ctx context.Context, tx Tx, t store.NewTrigger, evalID string, now time.Time) (fresh bool, err error) {
	if t.Commit == "" || t.Source == "" {
		return false, fmt.Errorf("record head: commit and source required: %w", store.ErrInvalid)
	}
	n, err := tx.Exec(ctx, `INSERT INTO trigger_head (project_id, commit_sha, branch, source, evaluation_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (project_id, commit_sha) DO NOTHING`,
		t.ProjectID, t.Commit, t.Branch, t.Source, evalID, now)
	return n == 1, err
}

// insertEvaluation writes a new Queued evaluation row and, in the same transaction, its
// pending commit status (gradient-server §12.2), however the evaluation was started.
func insertEvaluation(ctx context.Context, tx Tx, e store.Evaluation) error {
	_, err := tx.Exec(ctx, `INSERT INTO evaluation (id, project_id, commit_sha, branch, wildcards, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, 0, $6, $6)`, e.ID, e.ProjectID, e.Commit, e.Branch, encodeList(e.Wildcards), e.CreatedAt)
	if err != nil {
		return err
	}
	return queueEvaluationStatus(ctx, tx, e.CreatedAt, e.ID, store.EvalQueued)
}
