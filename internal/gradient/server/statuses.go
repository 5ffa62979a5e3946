package server

import (
	"github.com/buildfleet/buildfleet/internal/gradient/statussender"
)

// newStatusSender is the outbox's sender (gradient-server §12.4): it runs beside the job
// loop, so a slow or failing forge never holds up a report.
func newStatusSender(cfg Config) *statussender.Sender {
	return statussender.New(statussender.Config{Store: cfg.Store, Secrets: cfg.Secrets, PublicURL: cfg.PublicURL,
		Logger: cfg.Logger.With("component", "statuses"), Now: cfg.Now})
}

// sealStatusSecret is the API's sealer for forge tokens and webhook secrets, nil without
// Secrets (the API then refuses to store them).
func (s *Server) sealStatusSecret() func(purpose string, plaintext []byte) ([]byte, error) {
	if s.cfg.Secrets == nil {
		return nil
	}
	return s.cfg.Secrets.Seal
}
