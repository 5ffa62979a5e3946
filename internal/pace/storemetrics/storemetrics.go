package kv

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// storeCollector reads the store's own counters at scrape time: they belong to the store, which
// counts them; pace-kv only names them.
type storeCollector struct{ st *store.Store }

var (
	descItems       = prometheus.NewDesc("pace_items", "Values stored (the largest tier's count).", nil, nil)
	descBytesUsed   = prometheus.NewDesc("pace_bytes_used", "Bytes used by the backing tier.", nil, nil)
	descBytesLimit  = prometheus.NewDesc("pace_bytes_limit", "Byte budget of the backing tier (0 = unbounded).", nil, nil)
	descTierItems   = prometheus.NewDesc("pace_tier_items", "Values held, per tier.", []string{"tier"}, nil)
	descTierBytes   = prometheus.NewDesc("pace_tier_bytes_used", "Bytes used, per tier.", []string{"tier"}, nil)
	descTierLimit   = prometheus.NewDesc("pace_tier_bytes_limit", "Byte budget, per tier (0 = unbounded).", []string{"tier"}, nil)
	descTierEvict   = prometheus.NewDesc("pace_tier_evictions_total", "Values evicted to keep the budget, per tier.", []string{"tier"}, nil)
	descTierIndex   = prometheus.NewDesc("pace_tier_index_bytes", "Estimated resident cost of the tier's index.", []string{"tier"}, nil)
	descEvictions   = prometheus.NewDesc("pace_kv_evictions_total", "Values evicted from the backing tier.", nil, nil)
	descCorrupt     = prometheus.NewDesc("pace_kv_corrupt_values_removed_total", "Stored values that failed verification, answered as misses and removed.", nil, nil)
	descReadFailure = prometheus.NewDesc("pace_kv_read_failures_total", "Disk reads that failed other than by corruption (answered as misses).", nil, nil)
)

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descItems, descBytesUsed, descBytesLimit, descTierItems, descTierBytes,
		descTierLimit, descTierEvict, descTierIndex, descEvictions, descCorrupt, descReadFailure} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.st.Stats()
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
	counter(descEvictions, float64(backing.Evictions))
	counter(descCorrupt, float64(s.CorruptRemoved))
	counter(descReadFailure, float64(s.ReadFailures))
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
