package store

import (
	"context"
	"time"
)

// Statuses keeps what gradient-server §12 needs: a project's commit status and webhook
// settings, and the outbox the sender drains. Rows enter the outbox inside the transactions
// that create an evaluation, record its entry points and settle it or its builds, so a
// restart loses no status.
type Statuses interface {
	// SetStatusConfig creates or replaces a project's settings; ErrNotFound for an unknown
	// project. Sealed values are stored as given (the caller seals them).
	SetStatusConfig(ctx context.Context, c StatusConfig) error
	// GetStatusConfig reads a project's settings; ErrNotFound when it has none.
	GetStatusConfig(ctx context.Context, projectID string) (StatusConfig, error)
	// DueStatuses lists queued outbox rows whose next attempt is due, oldest first, at most
	// limit, with each row's evaluation commit and project.
	DueStatuses(ctx context.Context, limit int) ([]OutgoingStatus, error)
	// RecordStatusAttempt stores the result of one delivery attempt of row id: delivered,
	// failed for good, or queued again at a.NextAt. ErrNotFound for an unknown row.
	RecordStatusAttempt(ctx context.Context, id string, a StatusAttempt) error
	// EvaluationStatuses lists an evaluation's outbox rows, oldest first.
	EvaluationStatuses(ctx context.Context, evaluationID string) ([]OutgoingStatus, error)
}

// StatusConfig is a project's gradient-server §12 settings. Forge "" posts no commit
// statuses; NotifyURL "" sends no webhook.
type StatusConfig struct {
	ProjectID       string
	Forge           string // github, gitea or gitlab
	APIURL          string
	Repo            string
	TokenEnc        []byte // sealed (aeadbox.PurposeStatusToken)
	PerBuild        bool   // also one status per entry point's build
	NotifyURL       string
	NotifySecretEnc []byte // sealed (aeadbox.PurposeNotifySecret)
	UpdatedAt       time.Time
}

// Outbox sinks.
const (
	SinkForge   = "forge"
	SinkWebhook = "webhook"
)

// Outbox outcomes; "" while queued.
const (
	StatusQueued     = ""
	StatusDelivered  = "delivered"
	StatusFailed     = "failed"
	StatusSuperseded = "superseded"
)

// OutgoingStatus is one outbox row: a status of an evaluation (BuildID "") or of one entry
// point's build, for one sink.
type OutgoingStatus struct {
	ID           string
	EvaluationID string
	ProjectID    string
	ProjectName  string
	Commit       string
	BuildID      string
	Attr         string
	Sink         string
	Context      string
	State        string // pending, success, failure, error or canceled
	Description  string
	Attempts     int
	NextAt       time.Time
	Outcome      string
	LastError    string
	LastHTTP     int
	DeliveredAt  time.Time
	CreatedAt    time.Time
}

// StatusAttempt is one delivery attempt's result.
type StatusAttempt struct {
	Outcome  string    // StatusDelivered, StatusFailed, or StatusQueued to retry at NextAt
	Error    string    // why it failed ("" when delivered); never holds a secret
	HTTP     int       // the answer's status code, 0 without one
	NextAt   time.Time // when queued again
	Attempts int       // attempts made so far, this one included
}
