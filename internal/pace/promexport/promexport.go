// Package promexport is the one exporter of pace's metrics: it registers the components'
// counter.Metric lists with a daemon's own Prometheus registry, read at every scrape, beside
// the Go runtime's and the process's collectors. pace-kv and pace-node use it alike; no other
// pace package imports Prometheus.
package promexport

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
)

// Registry is one daemon's metrics: the runtime's collectors and every Metric registered with
// Add, each name once.
type Registry struct{ reg *prometheus.Registry }

// New is a registry holding the Go runtime's and the process's collectors.
func New() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Registry{reg: reg}
}

// Add registers metrics. A name registered twice, or a Metric with no source of values, is a
// programming error and panics, as the registry's MustRegister does.
func (r *Registry) Add(metrics ...counter.Metric) {
	for _, m := range metrics {
		r.reg.MustRegister(collector(m))
	}
}

// Handler serves the registry in the Prometheus text format.
func (r *Registry) Handler() http.Handler { return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{}) }

// Gatherer is the registry for tests that read it with prometheus/testutil.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

func collector(m counter.Metric) prometheus.Collector {
	sources := 0
	for _, set := range []bool{m.Value != nil, m.Read != nil, m.Samples != nil} {
		if set {
			sources++
		}
	}
	if sources != 1 || m.Name == "" || m.Help == "" {
		panic(fmt.Sprintf("promexport: metric %q needs a name, a help text and exactly one source of values", m.Name))
	}
	return &metricCollector{m: m, desc: prometheus.NewDesc(m.Name, m.Help, m.Labels, nil)}
}

// metricCollector reads one Metric at scrape time.
type metricCollector struct {
	m    counter.Metric
	desc *prometheus.Desc
}

func (c *metricCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *metricCollector) Collect(ch chan<- prometheus.Metric) {
	kind := prometheus.CounterValue
	if c.m.Kind == counter.Gauge {
		kind = prometheus.GaugeValue
	}
	switch {
	case c.m.Value != nil:
		ch <- prometheus.MustNewConstMetric(c.desc, kind, float64(c.m.Value.Load()))
	case c.m.Read != nil:
		ch <- prometheus.MustNewConstMetric(c.desc, kind, c.m.Read())
	default:
		for _, s := range c.m.Samples() {
			ch <- prometheus.MustNewConstMetric(c.desc, kind, s.Value, s.LabelValues...)
		}
	}
}
