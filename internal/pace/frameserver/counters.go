package frameserver

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
)

// Counters is an Observer that counts every event in atomics and lists them as metrics, for a
// daemon with no counting of its own to do (the node port). The zero value is ready.
type Counters struct {
	accepted atomic.Uint64
	rejected [len(rejectNames)]atomic.Uint64
	closed   [len(closeNames)]atomic.Uint64
	refused  [len(refusalNames)]atomic.Uint64
}

var _ Observer = (*Counters)(nil)

func (c *Counters) ConnAccepted()                       { c.accepted.Add(1) }
func (c *Counters) ConnRejected(r RejectReason)         { c.rejected[r].Add(1) }
func (c *Counters) ConnClosed(r CloseReason)            { c.closed[r].Add(1) }
func (c *Counters) Refused(k RefusalKind)               { c.refused[k].Add(1) }
func (c *Counters) count(r RejectReason) *atomic.Uint64 { return &c.rejected[r] }

// Metrics names the counters under prefix (e.g. "pace_node_frame"): connections accepted,
// refused at the cap and per address, closed by reason, and frames refused by kind.
func (c *Counters) Metrics(prefix string) []counter.Metric {
	closed := map[string]*atomic.Uint64{}
	for _, r := range CloseReasons {
		closed[r.String()] = &c.closed[r]
	}
	refused := map[string]*atomic.Uint64{}
	for _, k := range RefusalKinds {
		refused[k.String()] = &c.refused[k]
	}
	return []counter.Metric{
		{Name: prefix + "_connections_total", Help: "Connections accepted.", Value: &c.accepted},
		{Name: prefix + "_connections_refused_at_capacity_total", Help: "Connections closed at once: the connection cap was reached and none could be displaced.", Value: c.count(RejectedAtCapacity)},
		{Name: prefix + "_connections_refused_per_address_total", Help: "Connections closed at once: their address already held its cap.", Value: c.count(RejectedPerAddress)},
		counter.Labelled(prefix+"_connections_closed_total", "Connections closed, by reason.", "reason", closed),
		counter.Labelled(prefix+"_frames_refused_total", "Frames refused by the server before any handler saw them, by kind.", "kind", refused),
	}
}

// Gauges reads the server at scrape time, named under prefix: connections open, payload bytes
// charged to the in-flight budget, and the budget.
func (s *Server) Gauges(prefix string) []counter.Metric {
	return []counter.Metric{
		counter.GaugeFunc(prefix+"_connections_open", "Connections open now.", func() float64 { return float64(s.ActiveConns()) }),
		counter.GaugeFunc(prefix+"_inflight_payload_bytes", "Payload bytes of frames over 64 KiB being received or handled now, charged to the in-flight budget.",
			func() float64 { return float64(s.InflightPayload()) }),
		counter.GaugeFunc(prefix+"_inflight_payload_limit_bytes", "The in-flight payload budget (0: none).",
			func() float64 { return float64(max(0, s.cfg.PayloadBudget)) }),
	}
}
