package statussender

import (
	"context"
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/forgestatus"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// errNoSettings gives up a status whose project no longer has that sink.
var errNoSettings = errors.New("the project has no settings for this destination any more")

// request builds the HTTP request of one outbox row from the project's current settings.
// The label names the counters' series.
func (s *Sender) request(ctx context.Context, o store.OutgoingStatus) (forgestatus.Request, string, error) {
	label := store.SinkWebhook
	cfg, err := s.cfg.Store.GetStatusConfig(ctx, o.ProjectID)
	if o.Sink == store.SinkForge {
		label = cfg.Forge
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return forgestatus.Request{}, label, errNoSettings
	case err != nil:
		return forgestatus.Request{}, label, fmt.Errorf("reading the project's settings: %w", err)
	case s.cfg.Secrets == nil:
		return forgestatus.Request{}, label, errors.New("the server has no secret key to open the token with")
	}
	if o.Sink == store.SinkForge {
		return s.forgeRequest(o, cfg)
	}
	return s.webhookRequest(o, cfg)
}

func (s *Sender) forgeRequest(o store.OutgoingStatus, cfg store.StatusConfig) (forgestatus.Request, string, error) {
	if cfg.Forge == "" || len(cfg.TokenEnc) == 0 {
		return forgestatus.Request{}, cfg.Forge, errNoSettings
	}
	token, err := s.cfg.Secrets.Open(aeadbox.PurposeStatusToken, cfg.TokenEnc)
	if err != nil {
		return forgestatus.Request{}, cfg.Forge, fmt.Errorf("opening the forge token: %w", err)
	}
	state, err := forgestatus.ParseState(o.State)
	if err != nil {
		return forgestatus.Request{}, cfg.Forge, err
	}
	r, err := forgestatus.Build(forgestatus.Target{Forge: forgestatus.Forge(cfg.Forge), APIURL: cfg.APIURL, Repo: cfg.Repo},
		string(token), forgestatus.Status{Commit: o.Commit, State: state, TargetURL: s.targetURL(o),
			Description: o.Description, Context: o.Context})
	return r, cfg.Forge, err
}

func (s *Sender) webhookRequest(o store.OutgoingStatus, cfg store.StatusConfig) (forgestatus.Request, string, error) {
	if cfg.NotifyURL == "" || len(cfg.NotifySecretEnc) == 0 {
		return forgestatus.Request{}, store.SinkWebhook, errNoSettings
	}
	secret, err := s.cfg.Secrets.Open(aeadbox.PurposeNotifySecret, cfg.NotifySecretEnc)
	if err != nil {
		return forgestatus.Request{}, store.SinkWebhook, fmt.Errorf("opening the webhook secret: %w", err)
	}
	kind := "evaluation"
	if o.BuildID != "" {
		kind = "build"
	}
	r, err := forgestatus.WebhookRequest(cfg.NotifyURL, secret, forgestatus.Event{Kind: kind, DeliveryID: o.ID,
		Project: o.ProjectName, ProjectID: o.ProjectID, EvaluationID: o.EvaluationID, BuildID: o.BuildID, Attr: o.Attr,
		Commit: o.Commit, State: forgestatus.State(o.State), Context: o.Context, Description: o.Description,
		TargetURL: s.targetURL(o), At: o.CreatedAt})
	return r, store.SinkWebhook, err
}

// targetURL is <public-url>/evaluations/<id>, the page the web UI serves.
func (s *Sender) targetURL(o store.OutgoingStatus) string {
	if s.cfg.PublicURL == "" {
		return ""
	}
	return s.cfg.PublicURL + "/evaluations/" + o.EvaluationID
}
