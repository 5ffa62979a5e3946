package server

import (
	"context"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/repocred"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/trigger"
)

// newTriggers builds the polls and webhooks of gradient-server §11: webhook secrets sealed
// with the server's Secrets (without them no secret can be set or opened, so every delivery
// is refused), new evaluations kicking the dispatcher, and git reaching a private
// repository with the project's own credential (gradient-server §13).
func (s *Server) newTriggers() *trigger.Service {
	cfg := trigger.Config{Store: s.cfg.Store, Kick: s.Kick, Remote: s.cfg.GitRemote, Log: s.log, Now: s.now}
	if box := s.cfg.Secrets; box != nil {
		cfg.SealSecret = func(b []byte) ([]byte, error) { return box.Seal(trigger.PurposeWebhookSecret, b) }
		cfg.OpenSecret = func(b []byte) ([]byte, error) { return box.Open(trigger.PurposeWebhookSecret, b) }
		if cfg.Remote == nil {
			cfg.Remote = s.privateRemote
		}
	}
	return trigger.New(cfg)
}

// privateRemote is how the server's own git (ls-remote for polls and branch resolution)
// reaches a project's repository: with its deploy key or token laid out in a private
// directory that the Remote's Cleanup removes, and with none for a project that has none
// (which then fails fast instead of prompting or using this machine's identity).
func (s *Server) privateRemote(ctx context.Context, p store.Project) (trigger.Remote, error) {
	sealed, err := s.cfg.Store.ProjectCredentials(ctx, p.ID)
	if err != nil {
		return trigger.Remote{}, fmt.Errorf("project %s credentials: %w", p.Name, err)
	}
	cred, err := repocred.Open(s.cfg.Secrets, p.RepoURL, repocred.Sealed{SSHKeyEnc: sealed.SSHKeyEnc, HTTPSTokenEnc: sealed.HTTPSTokenEnc})
	if err != nil {
		return trigger.Remote{}, fmt.Errorf("project %s credential: %w", p.Name, err)
	}
	defer cred.Wipe()
	env, cleanup, err := repocred.Prepare("", p.RepoURL, cred)
	if err != nil {
		return trigger.Remote{}, fmt.Errorf("project %s credential: %w", p.Name, err)
	}
	return trigger.Remote{URL: p.RepoURL, Env: env, Cleanup: cleanup}, nil
}
