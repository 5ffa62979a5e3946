package server

import (
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/promexport"
)

// MetricsHandler serves every counter of the server in the Prometheus text format: the worker
// side's (Counters.Metrics), the cache traffic of all sessions (cacheserve.Counters.Metrics,
// labelled by reason where they have one), and the Go runtime's, all through promexport.
// Every series is present from the start, at zero. cmd/gradient-server serves it on its own
// --metrics listener, so the public listener does not expose it.
func (s *Server) MetricsHandler() http.Handler { return s.metricsRegistry().Handler() }

func (s *Server) metricsRegistry() *promexport.Registry {
	reg := promexport.New()
	reg.Add(s.counters.Metrics()...)
	reg.Add(s.cacheCounters.Metrics()...)
	return reg
}
