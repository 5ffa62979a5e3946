package tier

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
)

// counters are the tier's own counts (pace-node §10.6, cache group), plain atomics so the
// request path takes no lock; Metrics names them for the node's registry.
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

// Metrics lists the tier's counters under the names of pace-node §10.6, so the node registers
// each name once, exactly as pace-node §10.6 spells it, with the tier's own store beside them
// (storemetrics).
func (t *Tier) Metrics() []counter.Metric {
	c := &t.c
	configured := 0.0
	if t.up != nil {
		configured = 1
	}
	return []counter.Metric{
		{Name: "pace_node_cache_hits_total", Help: "FETCHes answered from the local tier.", Value: &c.hits},
		{Name: "pace_node_cache_misses_total", Help: "FETCHes answered Miss (local miss, and the upstream missing, down or refusing).", Value: &c.misses},
		{Name: "pace_node_cache_upstream_hits_total", Help: "FETCHes missed locally and answered from the upstream.", Value: &c.upstreamHits},
		{Name: "pace_node_cache_fill_failures_total", Help: "Upstream hits the local tier failed to keep (still served).", Value: &c.fillFailures},
		{Name: "pace_node_cache_store_failures_total", Help: "STOREs the local tier failed to write.", Value: &c.storeFailures},
		{Name: "pace_node_cache_upstream_stores_total", Help: "Stores the upstream accepted.", Value: &c.upstreamStores},
		{Name: "pace_node_cache_upstream_store_failures_total", Help: "Stores not accepted upstream (refused, unreachable, skipped while down, or dropped).", Value: &c.upstreamStoreFails},
		{Name: "pace_node_cache_requests_refused_not_local_total", Help: "Cache verbs refused because the caller is not this machine.", Value: &c.refusedNotLocal},
		{Name: "pace_node_cache_requests_refused_payload_too_large_total", Help: "Cache verbs refused: payload over the cap.", Value: &c.refusedTooLarge},
		{Name: "pace_node_cache_requests_refused_malformed_payload_total", Help: "Cache verbs refused: malformed request or value.", Value: &c.refusedMalformed},
		{Name: "pace_node_cache_requests_refused_foreign_generation_total", Help: "STOREs refused: a compile-value of another generation.", Value: &c.refusedForeign},
		counter.GaugeFunc("pace_node_upstream_configured", "1 when --upstream is set; read beside the upstream counters.", func() float64 { return configured }),
	}
}
