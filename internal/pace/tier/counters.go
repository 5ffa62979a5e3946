package tier

import "sync/atomic"

// counters are the tier's own counts (pace-node §10.6, cache group), plain atomics so the
// request path takes no lock; the node maps a Snapshot to Prometheus.
type counters struct {
	hits, misses, upstreamHits, fillFailures          atomic.Uint64
	storeFailures, upstreamStores, upstreamStoreFails atomic.Uint64
	refusedNotLocal, refusedTooLarge                  atomic.Uint64
	refusedMalformed, refusedForeign                  atomic.Uint64
}

// Snapshot is a reading of the tier's counters. FETCHes answered are Hits + UpstreamHits +
// Misses: the three are disjoint.
type Snapshot struct {
	Hits                  uint64 // FETCH answered from the local tier
	Misses                uint64 // FETCH answered Miss (local miss, and upstream missing, down or refusing)
	UpstreamHits          uint64 // FETCH missed locally and answered from the upstream
	FillFailures          uint64 // upstream hits the local tier failed to keep (still served)
	StoreFailures         uint64 // STOREs the local tier failed to write (answered storage-write-failed)
	UpstreamStores        uint64 // stores the upstream accepted
	UpstreamStoreFailures uint64 // stores not accepted upstream: refused, unreachable, skipped while down, or dropped with the queue full

	RefusedNotLocal          uint64 // cache verbs from another machine (not-a-member)
	RefusedPayloadTooLarge   uint64 // reported by the node through CountFrameRefusal
	RefusedMalformedPayload  uint64 // malformed key or request, or a STORE value that is not a compile-value
	RefusedForeignGeneration uint64 // STORE of a compile-value of another generation

	UpstreamConfigured bool
}

func (c *counters) snapshot(upstreamConfigured bool) Snapshot {
	return Snapshot{
		Hits: c.hits.Load(), Misses: c.misses.Load(), UpstreamHits: c.upstreamHits.Load(),
		FillFailures: c.fillFailures.Load(), StoreFailures: c.storeFailures.Load(),
		UpstreamStores: c.upstreamStores.Load(), UpstreamStoreFailures: c.upstreamStoreFails.Load(),
		RefusedNotLocal: c.refusedNotLocal.Load(), RefusedPayloadTooLarge: c.refusedTooLarge.Load(),
		RefusedMalformedPayload: c.refusedMalformed.Load(), RefusedForeignGeneration: c.refusedForeign.Load(),
		UpstreamConfigured: upstreamConfigured,
	}
}

// Series is one exported metric of a Snapshot under its exact name.
type Series struct {
	Name  string
	Help  string
	Value float64
	Gauge bool // false: a counter
}

// Series lists the snapshot under the names of pace-node §10.6, so the node registers each
// name once, exactly as pace-node §10.6 spells it.
func (s Snapshot) Series() []Series {
	counter := func(name, help string, v uint64) Series {
		return Series{Name: name, Help: help, Value: float64(v)}
	}
	configured := 0.0
	if s.UpstreamConfigured {
		configured = 1
	}
	return []Series{
		counter("pace_node_cache_hits_total", "FETCHes answered from the local tier.", s.Hits),
		counter("pace_node_cache_misses_total", "FETCHes answered Miss.", s.Misses),
		counter("pace_node_cache_upstream_hits_total", "FETCHes missed locally and answered from the upstream.", s.UpstreamHits),
		counter("pace_node_cache_fill_failures_total", "Upstream hits the local tier failed to keep (still served).", s.FillFailures),
		counter("pace_node_cache_store_failures_total", "STOREs the local tier failed to write.", s.StoreFailures),
		counter("pace_node_cache_upstream_stores_total", "Stores the upstream accepted.", s.UpstreamStores),
		counter("pace_node_cache_upstream_store_failures_total", "Stores not accepted upstream (refused, unreachable, skipped while down, or dropped).", s.UpstreamStoreFailures),
		counter("pace_node_cache_requests_refused_not_local_total", "Cache verbs refused because the caller is not this machine.", s.RefusedNotLocal),
		counter("pace_node_cache_requests_refused_payload_too_large_total", "Cache verbs refused: payload over the cap.", s.RefusedPayloadTooLarge),
		counter("pace_node_cache_requests_refused_malformed_payload_total", "Cache verbs refused: malformed request or value.", s.RefusedMalformedPayload),
		counter("pace_node_cache_requests_refused_foreign_generation_total", "STOREs refused: a compile-value of another generation.", s.RefusedForeignGeneration),
		{Name: "pace_node_upstream_configured", Help: "1 when --upstream is set; read beside the upstream counters.", Value: configured, Gauge: true},
	}
}
