package trigger

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/gitref"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// PurposeWebhookSecret is the aeadbox purpose webhook secrets are sealed under.
const PurposeWebhookSecret = "gradient webhook secret v1"

// Defaults of gradient-server §11.
const (
	DefaultPollInterval  = 60 * time.Second
	DefaultGitTimeout    = 30 * time.Second
	DefaultMaxHookBody   = 4 << 20 // bytes of one delivery
	DefaultMaxGitOutput  = 8 << 20 // bytes of one ls-remote listing
	DefaultHookDeliverys = 8       // deliveries read at once
)

// Config wires a Service.
type Config struct {
	Store store.Store
	// SealSecret and OpenSecret seal and open a project's webhook secret (nil OpenSecret:
	// every delivery is refused; nil SealSecret: no secret can be set).
	SealSecret func(secret []byte) ([]byte, error)
	OpenSecret func(sealed []byte) ([]byte, error)
	// Kick tells the dispatcher an evaluation was queued (nil: nothing).
	Kick func()
	// Remote says how git reaches a project's repository (nil: PublicRemote).
	Remote RemoteFunc
	Log    *slog.Logger
	Now    func() time.Time
	// Git is the git program (default "git"); GitTimeout and MaxGitOutput bound one run.
	Git          string
	GitTimeout   time.Duration
	MaxGitOutput int
	// MaxHookBody bounds a delivery's body, MaxHookDeliveries the deliveries read at once.
	MaxHookBody       int64
	MaxHookDeliveries int
}

// Service runs the triggers of one server.
type Service struct {
	cfg      Config
	log      *slog.Logger
	counters *Counters
	hookSlot chan struct{}
	// decoy verifies deliveries for unknown projects, so they cost what a known one costs.
	decoy []byte
}

// New builds a Service, filling the defaults.
func New(cfg Config) *Service {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Kick == nil {
		cfg.Kick = func() {}
	}
	if cfg.Remote == nil {
		cfg.Remote = PublicRemote
	}
	if cfg.Git == "" {
		cfg.Git = "git"
	}
	cfg.GitTimeout = orDefault(cfg.GitTimeout, DefaultGitTimeout)
	cfg.MaxGitOutput = orDefault(cfg.MaxGitOutput, DefaultMaxGitOutput)
	cfg.MaxHookBody = orDefault(cfg.MaxHookBody, DefaultMaxHookBody)
	cfg.MaxHookDeliveries = orDefault(cfg.MaxHookDeliveries, DefaultHookDeliverys)
	decoy := make([]byte, 32)
	rand.Read(decoy)
	return &Service{cfg: cfg, log: cfg.Log, counters: newCounters(),
		hookSlot: make(chan struct{}, cfg.MaxHookDeliveries), decoy: decoy}
}

func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// Hooks is the webhook endpoint (ServeHTTP).
func (s *Service) Hooks() http.Handler { return s }

// SealWebhookSecret seals a project's webhook secret for the store.
func (s *Service) SealWebhookSecret(secret []byte) ([]byte, error) {
	if s.cfg.SealSecret == nil {
		return nil, errors.New("trigger: no sealing key; webhook secrets cannot be stored")
	}
	return s.cfg.SealSecret(secret)
}

// Counters are the service's counters.
func (s *Service) Counters() *Counters { return s.counters }

// evaluate hands a followed head to the store, which starts an evaluation only for a head
// the project has not seen (gradient-server §11.4).
func (s *Service) evaluate(ctx context.Context, p store.Project, h gitref.Head, source string) (store.TriggerResult, error) {
	r, err := s.cfg.Store.TriggerEvaluation(ctx, store.NewTrigger{ProjectID: p.ID, Branch: h.Branch, Commit: h.Commit, Source: source})
	if err != nil {
		return r, err
	}
	if r.Created {
		s.counters.evaluations(source).Add(1)
		s.log.Info("trigger: evaluation queued", "project", p.Name, "branch", h.Branch, "commit", h.Commit,
			"trigger", source, "evaluation", r.EvaluationID)
		s.cfg.Kick()
	}
	return r, nil
}

// policy is what a project follows, with the project's own branch standing in for an
// empty pattern list.
func policy(t store.TriggerSettings) gitref.Policy {
	return gitref.Policy{Branches: t.Branches, Tags: t.Tags}
}
