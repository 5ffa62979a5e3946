package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/repocred"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// errNoSecrets: a project has a credential but the server has no key to open it with.
var errNoSecrets = errors.New("the server has no secret key to open it with")

// credentialFor is the Credential message that goes right before a's AssignJob
// (gradient-server §13.2): only for a flake job that fetches (its source not yet in a cache),
// and only when the project has a credential of the kind its URL takes. nil means none.
func (s *Server) credentialFor(ctx context.Context, a store.Assignment) (*wire.Credential, error) {
	if a.Eval == nil || a.Eval.FlakeSource != "" || repocred.ForURL(a.Eval.RepoURL) == repocred.None {
		return nil, nil
	}
	sealed, err := s.cfg.Store.ProjectCredentials(ctx, a.Eval.ProjectID)
	if err != nil {
		return nil, fmt.Errorf("reading the project's credentials: %w", err)
	}
	if sealed.SSHKeyEnc == nil && sealed.HTTPSTokenEnc == nil {
		return nil, nil
	}
	if s.cfg.Secrets == nil {
		return nil, errNoSecrets
	}
	c, err := repocred.Open(s.cfg.Secrets, a.Eval.RepoURL, repocred.Sealed{SSHKeyEnc: sealed.SSHKeyEnc, HTTPSTokenEnc: sealed.HTTPSTokenEnc})
	if err != nil || c.Kind == repocred.None {
		return nil, err
	}
	defer c.Wipe()
	return &wire.Credential{Kind: wire.CredentialKindSSHKey, Data: c.WireData()}, nil
}

// failUnopenable fails an evaluation job whose credential cannot be opened, instead of
// sending it without one: it would fail anyway, with a misleading "no deploy key".
func (w *worker) failUnopenable(ctx context.Context, a store.Assignment, cause error) {
	w.log.Error("the project's repository credential cannot be opened; failing the evaluation", "job", a.Job, "err", cause)
	eff, err := w.srv.cfg.Store.FailEvaluationJob(ctx, a.ID, store.BuildFailure{Kind: store.FailPermanent,
		Reason: "fetch: the project's repository credential cannot be opened: " + cause.Error()})
	if err != nil {
		w.log.Warn("failing the evaluation", "job", a.Job, "err", err)
	}
	w.srv.Apply(ctx, eff)
}

// sendCredential sends c (if any) and wipes it. Assignments to one session go out one at a
// time (fillMu), so nothing comes between it and its AssignJob.
func (w *worker) sendCredential(ctx context.Context, c *wire.Credential) error {
	if c == nil {
		return nil
	}
	defer clear(c.Data)
	if err := w.send(ctx, c); err != nil {
		w.log.Warn("sending Credential; the assignment is abandoned with the session", "err", err)
		return err
	}
	return nil
}
