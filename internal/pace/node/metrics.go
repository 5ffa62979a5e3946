package node

import (
	"net/http"
	"runtime"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/counter"
	"github.com/buildfleet/buildfleet/internal/pace/promexport"
	"github.com/buildfleet/buildfleet/internal/pace/storemetrics"
)

// metrics is the node's own registry: every component's counters and gauges under their exact
// names, registered once through promexport. A component that does not run registers nothing
// (absent, not 0).
type metrics struct{ reg *promexport.Registry }

func (n *Node) newMetrics() *metrics {
	m := &metrics{reg: promexport.New()}
	m.reg.Add(n.sched.Counters().Metrics()...)
	m.reg.Add(n.proofCounters.Metrics()...)
	m.reg.Add(n.frameCounters.Metrics("pace_node_frame")...)
	m.reg.Add(n.frames.Gauges("pace_node_frame")...)
	m.reg.Add(n.counters.metrics()...)
	m.reg.Add(n.enroll.c.metrics()...)
	if e := n.discovered.engine; e != nil {
		m.reg.Add(e.Metrics()...)
	}
	m.reg.Add(n.links.counters.Metrics()...)
	m.reg.Add(n.links.net.Metrics()...)
	if n.work != nil {
		m.reg.Add(n.work.Counters().Metrics()...)
		m.reg.Add(n.work.Gauges()...)
	}
	if n.tier != nil {
		m.reg.Add(n.tier.Metrics()...)
		m.reg.Add(storemetrics.Metrics(n.tier.Stats, "pace_node_cache")...)
	}
	m.reg.Add(consensusMetrics(n.cons)...)
	m.reg.Add(
		counter.GaugeFunc("pace_node_logical_cores", "Logical cores of this machine.", func() float64 { return float64(runtime.NumCPU()) }),
		counter.GaugeFunc("pace_node_memory_total_bytes", "Memory of this machine.", func() float64 { return float64(n.host.MemoryTotal) }),
		counter.GaugeFunc("pace_node_memory_available_bytes", "Memory available now.", func() float64 { return float64(memAvailable()) }),
	)
	return m
}

func (m *metrics) handler() http.Handler { return m.reg.Handler() }

// consensusMetrics are the consensus gauges of pace-node §10.6, read from the node's status
// at scrape time.
func consensusMetrics(cons *consensus.Node) []counter.Metric {
	return []counter.Metric{
		counter.GaugeFunc("pace_node_consensus_members", "Members in the applied fleet state.", func() float64 { return float64(len(cons.Status().Members)) }),
		counter.GaugeFunc("pace_node_consensus_term", "Current Raft term.", func() float64 { return float64(cons.Status().Term) }),
		counter.GaugeFunc("pace_node_consensus_commit_index", "Raft commit index.", func() float64 { return float64(cons.Status().CommitIndex) }),
		{Name: "pace_node_consensus_role", Help: "1 for this node's current role.", Kind: counter.Gauge, Labels: []string{"role"},
			Samples: func() []counter.Sample {
				return []counter.Sample{{LabelValues: []string{string(cons.Status().Role)}, Value: 1}}
			}},
		{Name: "pace_node_consensus_leader", Help: "1 for the known leader; absent during an election.", Kind: counter.Gauge, Labels: []string{"leader"},
			Samples: func() []counter.Sample {
				if id := cons.Status().LeaderID; id != "" {
					return []counter.Sample{{LabelValues: []string{id}, Value: 1}}
				}
				return nil
			}},
	}
}
