package store

import (
	"context"
	"time"
)

// Triggers is what starts evaluations by itself (gradient-server §11): each project's trigger
// settings and the heads it has seen.
type Triggers interface {
	// SetProjectTriggers changes the fields of u that are set; ErrNotFound for an unknown
	// project.
	SetProjectTriggers(ctx context.Context, projectID string, u TriggerUpdate) error
	// ProjectTriggers reads a project's settings, the defaults (no patterns, no tags, no
	// polling, no secret) when none were set; ErrNotFound for an unknown project.
	ProjectTriggers(ctx context.Context, projectID string) (TriggerSettings, error)
	// PollTargets lists the projects with polling on, by name.
	PollTargets(ctx context.Context) ([]PollTarget, error)
	// RecordPoll stamps a project's last poll and its error ("" when it succeeded).
	RecordPoll(ctx context.Context, projectID string, at time.Time, pollErr string) error
	// TriggerEvaluation queues an evaluation of a head the project has not seen, recording
	// the head in the same transaction, so a poll and a webhook racing for one commit make
	// one evaluation (gradient-server §11.4). A seen head returns Created false with the
	// evaluation it started ("" when none is recorded). ErrNotFound for an unknown project.
	TriggerEvaluation(ctx context.Context, t NewTrigger) (TriggerResult, error)
}

// TriggerSettings is what a project follows and how it learns of changes.
type TriggerSettings struct {
	// Branches are glob patterns over branch names (gitref); none follows the project's
	// branch, or the repository's default branch when that is empty too.
	Branches []string
	Tags     bool // follow every tag too
	Poll     bool // poll the repository with git ls-remote
	// WebhookSecretEnc is the sealed webhook secret (nil: webhooks are refused).
	WebhookSecretEnc []byte
	LastPollAt       time.Time // zero before the first poll
	LastPollError    string
}

// TriggerUpdate changes some of a project's settings; nil fields keep their value.
type TriggerUpdate struct {
	Branches         *[]string
	Tags, Poll       *bool
	WebhookSecretEnc []byte // nil: unchanged
	ClearSecret      bool   // remove the webhook secret
}

// PollTarget is a project with polling on.
type PollTarget struct {
	Project  Project
	Settings TriggerSettings
}

// NewTrigger is a head a trigger found: the project's Branch (a branch name, or the full
// ref of a tag or pull request) at Commit, found by Source ("poll", "github", "gitea",
// "gitlab", "manual").
type NewTrigger struct {
	ProjectID, Branch, Commit, Source string
}

// TriggerResult says whether TriggerEvaluation queued an evaluation, and which evaluation
// the head has.
type TriggerResult struct {
	EvaluationID string
	Created      bool
}
