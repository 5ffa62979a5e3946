package trigger

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/forgehook"
	"github.com/buildfleet/buildfleet/internal/gradient/gitref"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/uuid"
)

// HookReply is the JSON answer to a delivery: what came of it, for the forge's delivery log.
type HookReply struct {
	Outcome      string `json:"outcome"`          // queued, duplicate, ignored, refused
	Reason       string `json:"reason,omitempty"` // why ignored or refused
	EvaluationID string `json:"evaluation_id,omitempty"`
}

// ServeHTTP is POST /api/v1/hooks/{forge}/{project} (gradient-server §11.3). The order is the
// point: everything that needs no body is refused before it is read; the body is read only
// up to MaxHookBody, with at most MaxHookDeliveries at once; its signature is checked in
// constant time before any of it is parsed. An unknown project, one without a secret and a
// bad signature get the same 401, so the endpoint does not tell strangers which projects
// exist; the counter and the log name the real cause.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	forge, ok := s.admit(w, r)
	if !ok {
		return
	}
	select {
	case s.hookSlot <- struct{}{}:
		defer func() { <-s.hookSlot }()
	default:
		s.refuse(w, http.StatusServiceUnavailable, causeBusy, "too many deliveries at once; the forge retries")
		return
	}
	p, secret, cause := s.hookSecret(r.Context(), r.PathValue("project"))
	if cause == causeInternal {
		s.refuse(w, http.StatusInternalServerError, causeInternal, "the project's secret could not be read")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxHookBody))
	if err != nil {
		s.refuse(w, http.StatusRequestEntityTooLarge, causeTooLarge, "delivery too large or cut short")
		return
	}
	if err := forgehook.Verify(forge, secret, r.Header, body); err != nil || cause != "" {
		if cause == "" {
			cause = causeBadSignature
		}
		s.log.Warn("trigger: webhook refused", "forge", forge, "project", r.PathValue("project"), "cause", cause)
		s.refuse(w, http.StatusUnauthorized, cause, "the signature does not verify")
		return
	}
	s.deliver(w, r.Context(), forge, p, r.Header, body)
}

// admit refuses what needs no body to refuse: an unknown forge, a declared length over the
// limit, a missing signature header.
func (s *Service) admit(w http.ResponseWriter, r *http.Request) (forgehook.Forge, bool) {
	forge, ok := forgehook.ParseForge(r.PathValue("forge"))
	switch {
	case !ok:
		s.refuse(w, http.StatusNotFound, causeUnknownForge, "no such forge: use github, gitea, forgejo or gitlab")
	case r.ContentLength > s.cfg.MaxHookBody:
		s.refuse(w, http.StatusRequestEntityTooLarge, causeTooLarge, "delivery too large")
	case !forgehook.HasSignature(forge, r.Header):
		s.refuse(w, http.StatusUnauthorized, causeMissingSignature, "the delivery is not signed")
	default:
		return forge, true
	}
	return forge, false
}

// hookSecret finds the project of a hook path and opens its secret. For an unknown project
// or one without a secret it returns a decoy secret, so verification costs the same, and
// the cause to count.
func (s *Service) hookSecret(ctx context.Context, ref string) (store.Project, []byte, string) {
	p, err := s.project(ctx, ref)
	if errors.Is(err, store.ErrNotFound) {
		return p, s.decoy, causeUnknownProject
	}
	if err != nil {
		s.log.Error("trigger: reading a webhook's project", "err", err)
		return p, nil, causeInternal
	}
	t, err := s.cfg.Store.ProjectTriggers(ctx, p.ID)
	if err != nil {
		s.log.Error("trigger: reading a webhook's settings", "project", p.Name, "err", err)
		return p, nil, causeInternal
	}
	if len(t.WebhookSecretEnc) == 0 || s.cfg.OpenSecret == nil {
		return p, s.decoy, causeNoSecret
	}
	secret, err := s.cfg.OpenSecret(t.WebhookSecretEnc)
	if err != nil {
		s.log.Error("trigger: opening a webhook secret", "project", p.Name, "err", err)
		return p, nil, causeInternal
	}
	return p, secret, ""
}

// project finds a project by ID or name.
func (s *Service) project(ctx context.Context, ref string) (store.Project, error) {
	if uuid.Validate(ref) == nil {
		return s.cfg.Store.GetProject(ctx, ref)
	}
	return s.cfg.Store.ProjectByName(ctx, ref)
}

// deliver acts on a verified delivery.
func (s *Service) deliver(w http.ResponseWriter, ctx context.Context, forge forgehook.Forge, p store.Project, h http.Header, body []byte) {
	ev, err := forgehook.Parse(forge, h, body)
	if err != nil {
		s.refuse(w, http.StatusBadRequest, causeMalformed, err.Error())
		return
	}
	if ev.Kind == forgehook.Ignored {
		s.ignore(w, ev.Reason, "event "+ev.Name+" starts nothing")
		return
	}
	t, err := s.cfg.Store.ProjectTriggers(ctx, p.ID)
	if err != nil {
		s.refuse(w, http.StatusInternalServerError, causeInternal, "reading the project's settings")
		return
	}
	dflt := p.Branch
	if dflt == "" {
		dflt = ev.DefaultBranch
	}
	pol := policy(t)
	if (ev.Kind == forgehook.Push && !pol.Follows(ev.Ref, dflt)) ||
		(ev.Kind == forgehook.PullRequest && !pol.FollowsBranch(ev.BaseBranch, dflt)) {
		s.ignore(w, ignoredRef, "the project does not follow "+ev.Ref)
		return
	}
	r, err := s.evaluate(ctx, p, gitref.Head{Branch: gitref.RecordedName(ev.Ref), Commit: ev.Commit}, string(forge))
	if err != nil {
		s.log.Error("trigger: starting an evaluation", "project", p.Name, "err", err)
		s.refuse(w, http.StatusInternalServerError, causeInternal, "starting the evaluation failed")
		return
	}
	outcome := outcomeQueued
	if !r.Created {
		outcome = outcomeDuplicate
	}
	s.counters.Deliveries[outcome].Add(1)
	reply(w, http.StatusAccepted, HookReply{Outcome: outcome, EvaluationID: r.EvaluationID})
}

func (s *Service) ignore(w http.ResponseWriter, reason, text string) {
	s.counters.Deliveries["ignored_"+reason].Add(1)
	reply(w, http.StatusAccepted, HookReply{Outcome: "ignored", Reason: text})
}

func (s *Service) refuse(w http.ResponseWriter, status int, cause, text string) {
	s.counters.Refused[cause].Add(1)
	reply(w, status, HookReply{Outcome: "refused", Reason: text})
}

func reply(w http.ResponseWriter, status int, r HookReply) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(r)
}
