// Package storemetrics exports a store's own gauges and counters to Prometheus at scrape time,
// under the names pace-node §10.6 and pace-node §11 give them. The store counts; this package
// only names. pace-kv and pace-node's cache tier register it alike.
package storemetrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// Collector reads a store's statistics at every scrape.
type Collector struct {
	stats                            func() store.Stats
	evictions, corrupt, readFailures *prometheus.Desc
}

// New collects from stats (a *store.Store's Stats method, or the tier's). prefix names the
// daemon's own series for what the shared names do not cover: "pace_kv" for pace-kv
// (pace_kv_evictions_total …), "pace_node_cache" for a node's tier.
func New(stats func() store.Stats, prefix string) *Collector {
	return &Collector{
		stats:        stats,
		evictions:    prometheus.NewDesc(prefix+"_evictions_total", "Values evicted from the backing tier.", nil, nil),
		corrupt:      prometheus.NewDesc(prefix+"_corrupt_values_removed_total", "Stored values that failed verification, answered as misses and removed.", nil, nil),
		readFailures: prometheus.NewDesc(prefix+"_read_failures_total", "Disk reads that failed other than by corruption (answered as misses).", nil, nil),
	}
}

var (
	descItems      = prometheus.NewDesc("pace_items", "Values stored (the largest tier's count).", nil, nil)
	descBytesUsed  = prometheus.NewDesc("pace_bytes_used", "Bytes used by the backing tier.", nil, nil)
	descBytesLimit = prometheus.NewDesc("pace_bytes_limit", "Byte budget of the backing tier (0 = unbounded).", nil, nil)
	descTierItems  = prometheus.NewDesc("pace_tier_items", "Values held, per tier.", []string{"tier"}, nil)
	descTierBytes  = prometheus.NewDesc("pace_tier_bytes_used", "Bytes used, per tier.", []string{"tier"}, nil)
	descTierLimit  = prometheus.NewDesc("pace_tier_bytes_limit", "Byte budget, per tier (0 = unbounded).", []string{"tier"}, nil)
	descTierEvict  = prometheus.NewDesc("pace_tier_evictions_total", "Values evicted to keep the budget, per tier.", []string{"tier"}, nil)
	descTierIndex  = prometheus.NewDesc("pace_tier_index_bytes", "Estimated resident cost of the tier's index.", []string{"tier"}, nil)
)

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descItems, descBytesUsed, descBytesLimit, descTierItems, descTierBytes,
		descTierLimit, descTierEvict, descTierIndex, c.evictions, c.corrupt, c.readFailures} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	backing := s.Memory
	if s.Disk.Enabled {
		backing = s.Disk
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge(descItems, float64(backing.Items))
	gauge(descBytesUsed, float64(backing.Bytes))
	gauge(descBytesLimit, float64(backing.Limit))
	counter(c.evictions, float64(backing.Evictions))
	counter(c.corrupt, float64(s.CorruptRemoved))
	counter(c.readFailures, float64(s.ReadFailures))
	for _, t := range []struct {
		name string
		ts   store.TierStats
	}{{"memory", s.Memory}, {"disk", s.Disk}} {
		if !t.ts.Enabled {
			continue // an absent tier emits nothing (never a misleading 0)
		}
		gauge(descTierItems, float64(t.ts.Items), t.name)
		gauge(descTierBytes, float64(t.ts.Bytes), t.name)
		gauge(descTierLimit, float64(t.ts.Limit), t.name)
		counter(descTierEvict, float64(t.ts.Evictions), t.name)
		gauge(descTierIndex, float64(t.ts.IndexBytes), t.name)
	}
}
