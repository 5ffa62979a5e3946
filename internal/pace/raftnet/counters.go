package raftnet

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
)

// Counters are the transport's own counts; the links' refusals are peerlink's.
type Counters struct {
	SendsDroppedNoSession     atomic.Uint64
	InboundSessionsSuperseded atomic.Uint64
	Dials                     atomic.Uint64
	DialsFailed               atomic.Uint64
}

// Metrics lists the counters under their exposition names.
func (c *Counters) Metrics() []counter.Metric {
	return []counter.Metric{
		{Name: "pace_raft_sends_dropped_no_session_total", Help: "Raft messages dropped: no consensus link to the member could carry them (a learner not connected, a full queue, a voter that does not answer).", Value: &c.SendsDroppedNoSession},
		{Name: "pace_raft_inbound_sessions_superseded_total", Help: "Inbound consensus links closed because the same member opened a newer one.", Value: &c.InboundSessionsSuperseded},
		{Name: "pace_raft_dials_total", Help: "Consensus links this node dialled that completed the handshake.", Value: &c.Dials},
		{Name: "pace_raft_dials_failed_total", Help: "Consensus dials that did not connect or were refused (the refusal's own counter says why).", Value: &c.DialsFailed},
	}
}
