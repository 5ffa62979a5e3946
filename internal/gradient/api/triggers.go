package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/gitref"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// HooksPath is where push webhooks arrive under Prefix (gradient-server §11.3).
const HooksPath = "/hooks/{forge}/{project}"

// Triggers is what the API needs of the server's triggers (gradient-server §11).
type Triggers interface {
	// Hooks serves POST Prefix+HooksPath; its signature check is the authentication.
	Hooks() http.Handler
	// Resolve finds the head of a branch (else a tag) of the project's repository.
	Resolve(ctx context.Context, p store.Project, name string) (branch, commit string, err error)
	// SealWebhookSecret seals a webhook secret for the store.
	SealWebhookSecret(secret []byte) ([]byte, error)
}

// ProjectTriggers is what a project follows; the webhook secret itself never leaves the
// server.
type ProjectTriggers struct {
	Branches         []string `json:"branches"` // empty: the project's branch, else the repository's default
	Tags             bool     `json:"tags"`
	Poll             bool     `json:"poll"`
	WebhookSecretSet bool     `json:"webhook_secret_set"`
	LastPollAt       string   `json:"last_poll_at,omitempty"`
	LastPollError    string   `json:"last_poll_error,omitempty"`
}

// SetTriggersRequest is PATCH /api/v1/projects/{project}/triggers; fields left out keep
// their value. Branches [] follows the default branch again; WebhookSecret "" removes it.
type SetTriggersRequest struct {
	Branches      *[]string `json:"branches,omitempty"`
	Tags          *bool     `json:"tags,omitempty"`
	Poll          *bool     `json:"poll,omitempty"`
	WebhookSecret *string   `json:"webhook_secret,omitempty"`
}

const maxWebhookSecret = 1024

// withHooks sends POST …/hooks/{forge}/{project} past key authentication, which the
// delivery's signature replaces; the request log, the listener's limits and timeouts still
// apply. Every other path goes to next.
func (a *api) withHooks(next http.Handler) http.Handler {
	if a.trig == nil {
		return next
	}
	mux := http.NewServeMux()
	hooks := a.trig.Hooks()
	mux.Handle("POST "+Prefix+HooksPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := a.now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		hooks.ServeHTTP(rec, r)
		a.log.LogAttrs(r.Context(), levelFor(rec.status), "api request", slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.Int("status", rec.status), slog.Duration("duration", a.now().Sub(start)))
	}))
	mux.Handle("/", next)
	return mux
}

func (a *api) triggersOf(ctx context.Context, projectID string) (*ProjectTriggers, error) {
	t, err := a.store.ProjectTriggers(ctx, projectID)
	if err != nil {
		return nil, err
	}
	out := &ProjectTriggers{Branches: nonNil(t.Branches), Tags: t.Tags, Poll: t.Poll,
		WebhookSecretSet: len(t.WebhookSecretEnc) > 0, LastPollError: t.LastPollError}
	if !t.LastPollAt.IsZero() {
		out.LastPollAt = t.LastPollAt.UTC().Format("2006-01-02T15:04:05.999999Z07:00")
	}
	return out, nil
}

func (a *api) setProjectTriggers(w http.ResponseWriter, r *http.Request) error {
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return err
	}
	var req SetTriggersRequest
	if err := decodeBody(w, r, &req); err != nil {
		return err
	}
	u := store.TriggerUpdate{Branches: req.Branches, Tags: req.Tags, Poll: req.Poll}
	if req.Branches != nil {
		for _, b := range *req.Branches {
			if !gitref.ValidPattern(b) {
				return badRequest("branch pattern %q: want a branch name or glob (no spaces, no leading - or refs/)", b)
			}
		}
	}
	if req.WebhookSecret != nil {
		if u, err = a.sealWebhookSecret(u, *req.WebhookSecret); err != nil {
			return err
		}
	}
	if err := a.store.SetProjectTriggers(r.Context(), p.ID, u); err != nil {
		return err
	}
	out, err := a.triggersOf(r.Context(), p.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// sealWebhookSecret puts a webhook secret, sealed, into the update ("" clears it).
func (a *api) sealWebhookSecret(u store.TriggerUpdate, secret string) (store.TriggerUpdate, error) {
	if secret == "" {
		u.ClearSecret = true
		return u, nil
	}
	if a.trig == nil {
		return u, &httpError{http.StatusNotImplemented, CodeNotImplemented, "this server does not serve webhooks"}
	}
	if len(secret) > maxWebhookSecret || strings.TrimSpace(secret) != secret {
		return u, badRequest("webhook secret: at most %d bytes, no leading or trailing white space", maxWebhookSecret)
	}
	sealed, err := a.trig.SealWebhookSecret([]byte(secret))
	u.WebhookSecretEnc = sealed
	return u, err
}

// headOf is the commit and branch an evaluation request names: a commit hash as given (with
// the branch recorded), or a branch resolved to its head.
func (a *api) headOf(ctx context.Context, p store.Project, req StartEvaluationRequest) (branch, commit string, err error) {
	if req.Commit != "" || req.Branch == "" {
		commit, err = canonicalCommit(req.Commit)
		return req.Branch, commit, err
	}
	if a.trig == nil {
		return "", "", &httpError{http.StatusNotImplemented, CodeNotImplemented, "this server resolves no branches: give a commit hash"}
	}
	branch, commit, err = a.trig.Resolve(ctx, p, req.Branch)
	if err != nil {
		var unresolved interface{ Unresolved() bool }
		if errors.As(err, &unresolved) {
			return "", "", notFound("%v", err)
		}
		return "", "", &httpError{http.StatusBadGateway, CodeBadGateway, "resolving the branch: " + err.Error()}
	}
	return branch, commit, nil
}

// CodeBadGateway: the server could not reach the project's repository.
const CodeBadGateway = "bad_gateway"
