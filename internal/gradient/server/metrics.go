package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/buildfleet/buildfleet/internal/gradient/cacheserve"
)

// MetricsHandler serves every counter of the server in the Prometheus text format: the worker
// side's (Counters.Metrics), the cache traffic of all sessions (cacheserve.Counters.Samples,
// labelled by reason where they have one), and the Go runtime's. Every series is present from
// the start, at zero. cmd/gradient-server serves it on its own --metrics listener, so the
// public listener does not expose it.
func (s *Server) MetricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, m := range s.counters.Metrics() {
		v := m.Value
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: m.Name, Help: m.Help},
			func() float64 { return float64(v.Load()) }))
	}
	reg.MustRegister(cacheCollector{&s.cacheCounters})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// cacheCollector reads cacheserve's counters at scrape time.
type cacheCollector struct{ c *cacheserve.Counters }

func (c cacheCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c cacheCollector) Collect(ch chan<- prometheus.Metric) {
	for _, sm := range c.c.Samples() {
		help := "Cache traffic of every session (see internal/gradient/cacheserve)."
		if sm.Label == "" {
			ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(sm.Name, help, nil, nil), prometheus.CounterValue, float64(sm.Value))
			continue
		}
		desc := prometheus.NewDesc(sm.Name, help, []string{"reason"}, nil)
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(sm.Value), sm.Label)
	}
}
