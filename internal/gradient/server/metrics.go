package server

import (
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/counter"
	"github.com/buildfleet/buildfleet/internal/gradient/promexport"
)

// MetricsHandler serves every counter of the server in the Prometheus text format: the worker
// side's (Counters.Metrics), the cache traffic of all sessions (cacheserve.Counters.Metrics,
// labelled by reason where they have one), and the Go runtime's, all through promexport.
// Every series is present from the start, at zero. cmd/gradient-server serves it on its own
// --metrics listener, so the public listener does not expose it.
// extra are other components' counters served beside them (the HTTP front's).
func (s *Server) MetricsHandler(extra ...counter.Metric) http.Handler {
	return s.metricsRegistry(extra...).Handler()
}

func (s *Server) metricsRegistry(extra ...counter.Metric) *promexport.Registry {
	reg := promexport.New()
	reg.Add(s.counters.Metrics()...)
	reg.Add(s.cacheCounters.Metrics()...)
	reg.Add(s.logs.Counters().Metrics()...) // followed build logs (gradient-server §16)
	reg.Add(s.retained.metrics()...)
	reg.Add(counter.Metric{Name: "gradient_log_lines_suppressed_total",
		Help:  "Log lines about hostile events (malformed openings, violations, refusals) dropped by the log's rate bound.",
		Value: s.hostileLog.SuppressedCounter()})
	reg.Add(s.triggers.Counters().Metrics()...)
	reg.Add(s.statuses.Counters().Metrics()...)
	reg.Add(extra...)
	return reg
}
