package server

import (
	"github.com/buildfleet/buildfleet/internal/gradient/trigger"
)

// newTriggers builds the polls and webhooks of gradient-server §11: webhook secrets sealed
// with the server's Secrets (without them no secret can be set or opened, so every delivery
// is refused), new evaluations kicking the dispatcher.
func (s *Server) newTriggers() *trigger.Service {
	cfg := trigger.Config{Store: s.cfg.Store, Kick: s.Kick, Remote: s.cfg.GitRemote, Log: s.log, Now: s.now}
	if box := s.cfg.Secrets; box != nil {
		cfg.SealSecret = func(b []byte) ([]byte, error) { return box.Seal(trigger.PurposeWebhookSecret, b) }
		cfg.OpenSecret = func(b []byte) ([]byte, error) { return box.Open(trigger.PurposeWebhookSecret, b) }
	}
	return trigger.New(cfg)
}
