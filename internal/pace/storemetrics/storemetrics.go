// Package storemetrics names a store's own gauges and counters, read at scrape time, under the
// names pace-node §10.6 and pace-node §11 give them. The store counts; this package only names.
// pace-kv and pace-node's cache tier register its list alike, through promexport.
package storemetrics

import (
	"github.com/buildfleet/buildfleet/internal/pace/counter"
	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// Metrics reads stats (a *store.Store's Stats method, or the tier's) at every scrape. prefix
// names the daemon's own series for what the shared names do not cover: "pace_kv" for
// pace-kv (pace_kv_evictions_total …), "pace_node_cache" for a node's tier.
func Metrics(stats func() store.Stats, prefix string) []counter.Metric {
	backing := func(f func(store.TierStats) float64) func() float64 {
		return func() float64 {
			s := stats()
			if s.Disk.Enabled {
				return f(s.Disk)
			}
			return f(s.Memory)
		}
	}
	return []counter.Metric{
		counter.GaugeFunc("pace_items", "Values stored (the largest tier's count).",
			backing(func(t store.TierStats) float64 { return float64(t.Items) })),
		counter.GaugeFunc("pace_bytes_used", "Bytes used by the backing tier.",
			backing(func(t store.TierStats) float64 { return float64(t.Bytes) })),
		counter.GaugeFunc("pace_bytes_limit", "Byte budget of the backing tier (0 = unbounded).",
			backing(func(t store.TierStats) float64 { return float64(t.Limit) })),
		{Name: prefix + "_evictions_total", Help: "Values evicted from the backing tier to keep its budget.",
			Read: backing(func(t store.TierStats) float64 { return float64(t.Evictions) })},
		{Name: prefix + "_corrupt_values_removed_total", Help: "Stored values that failed verification, answered as misses and removed.",
			Read: func() float64 { return float64(stats().CorruptRemoved) }},
		{Name: prefix + "_read_failures_total", Help: "Disk reads that failed other than by corruption (answered as misses).",
			Read: func() float64 { return float64(stats().ReadFailures) }},
		perTier(stats, "pace_tier_items", "Values held, per tier.", counter.Gauge,
			func(t store.TierStats) float64 { return float64(t.Items) }),
		perTier(stats, "pace_tier_bytes_used", "Bytes used, per tier.", counter.Gauge,
			func(t store.TierStats) float64 { return float64(t.Bytes) }),
		perTier(stats, "pace_tier_bytes_limit", "Byte budget, per tier (0 = unbounded).", counter.Gauge,
			func(t store.TierStats) float64 { return float64(t.Limit) }),
		perTier(stats, "pace_tier_evictions_total", "Values evicted to keep the budget, per tier.", counter.Counter,
			func(t store.TierStats) float64 { return float64(t.Evictions) }),
		perTier(stats, "pace_tier_index_bytes", "Estimated resident cost of the tier's index, per tier.", counter.Gauge,
			func(t store.TierStats) float64 { return float64(t.IndexBytes) }),
	}
}

// perTier is a family labelled tier="memory" or "disk"; a tier the store does not have
// renders nothing (never a misleading 0).
func perTier(stats func() store.Stats, name, help string, kind counter.Kind, value func(store.TierStats) float64) counter.Metric {
	return counter.Metric{Name: name, Help: help, Kind: kind, Labels: []string{"tier"}, Samples: func() []counter.Sample {
		s := stats()
		var out []counter.Sample
		for _, t := range []struct {
			name string
			ts   store.TierStats
		}{{"memory", s.Memory}, {"disk", s.Disk}} {
			if t.ts.Enabled {
				out = append(out, counter.Sample{LabelValues: []string{t.name}, Value: value(t.ts)})
			}
		}
		return out
	}}
}
