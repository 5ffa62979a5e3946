// Package promexport is the one exporter of gradient's counters: it registers counter.Metric
// lists with the server's own Prometheus registry, read at every scrape, beside the Go
// runtime's and the process's collectors. No other gradient package imports Prometheus.
package promexport

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/buildfleet/buildfleet/internal/gradient/counter"
)

// Registry is one daemon's metrics: the runtime's collectors and every Metric added.
type Registry struct{ reg *prometheus.Registry }

// New is a registry holding the Go runtime's and the process's collectors.
func New() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Registry{reg: reg}
}

// Add registers metrics. A name registered twice, or a Metric without exactly one of Value
// and Series, is a programming error and panics, as the registry's MustRegister does.
func (r *Registry) Add(metrics ...counter.Metric) {
	for _, m := range metrics {
		if (m.Value == nil) == (m.Series == nil) || m.Name == "" || m.Help == "" || (m.Series != nil && m.Label == "") {
			panic(fmt.Sprintf("promexport: metric %q needs a name, a help text and either a value or labelled series", m.Name))
		}
		var labels []string
		if m.Series != nil {
			labels = []string{m.Label}
		}
		r.reg.MustRegister(&metricCollector{m: m, desc: prometheus.NewDesc(m.Name, m.Help, labels, nil)})
	}
}

// Handler serves the registry in the Prometheus text format.
func (r *Registry) Handler() http.Handler { return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{}) }

// Gatherer is the registry for tests that read it with prometheus/testutil.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// metricCollector reads one Metric at scrape time.
type metricCollector struct {
	m    counter.Metric
	desc *prometheus.Desc
}

func (c *metricCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *metricCollector) Collect(ch chan<- prometheus.Metric) {
	if c.m.Value != nil {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(c.m.Value.Load()))
		return
	}
	for label, v := range c.m.Series {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(v.Load()), label)
	}
}
