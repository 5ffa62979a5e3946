package node

import (
	"net/http"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/counter"
	"github.com/buildfleet/buildfleet/internal/pace/storemetrics"
)

// metrics is the node's own registry: every component's counters under their exact names,
// registered once. A component that does not run registers nothing (absent, not 0).
type metrics struct{ reg *prometheus.Registry }

func (n *Node) newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.counters(n.sched.Counters().Metrics())
	m.counters(n.proofCounters.Metrics())
	m.counters(n.counters.metrics())
	m.counters(n.links.counters.Metrics())
	m.counters(n.links.net.Metrics())
	if n.work != nil {
		m.counters(n.work.Counters().Metrics())
		for _, g := range n.work.Gauges() {
			m.gauge(g.Name, g.Help, g.Value)
		}
	}
	if n.tier != nil {
		m.reg.MustRegister(tierCollector{n}, storemetrics.New(n.tier.Stats, "pace_node_cache"))
	}
	m.reg.MustRegister(consensusCollector{n.cons})
	m.gauge("pace_node_logical_cores", "Logical cores of this machine.", func() float64 { return float64(runtime.NumCPU()) })
	m.gauge("pace_node_memory_total_bytes", "Memory of this machine.", func() float64 { return float64(n.host.MemoryTotal) })
	m.gauge("pace_node_memory_available_bytes", "Memory available now.", func() float64 { return float64(memAvailable()) })
	return m
}

func (m *metrics) counters(list []counter.Metric) {
	for _, c := range list {
		v := c.Value
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.Name, Help: c.Help},
			func() float64 { return float64(v.Load()) }))
	}
}

func (m *metrics) gauge(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

func (m *metrics) handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

// tierCollector reads the tier's counters at scrape time.
type tierCollector struct{ n *Node }

func (c tierCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c tierCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.n.tier.Snapshot().Series() {
		kind := prometheus.CounterValue
		if s.Gauge {
			kind = prometheus.GaugeValue
		}
		ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(s.Name, s.Help, nil, nil), kind, s.Value)
	}
}

// consensusCollector exports the consensus gauges of pace-node §10.6.
type consensusCollector struct{ cons *consensus.Node }

var (
	descMembers = prometheus.NewDesc("pace_node_consensus_members", "Members in the applied fleet state.", nil, nil)
	descTerm    = prometheus.NewDesc("pace_node_consensus_term", "Current Raft term.", nil, nil)
	descCommit  = prometheus.NewDesc("pace_node_consensus_commit_index", "Raft commit index.", nil, nil)
	descRole    = prometheus.NewDesc("pace_node_consensus_role", "1 for this node's current role.", []string{"role"}, nil)
	descLeader  = prometheus.NewDesc("pace_node_consensus_leader", "1 for the known leader; absent during an election.", []string{"leader"}, nil)
)

func (c consensusCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMembers, descTerm, descCommit, descRole, descLeader} {
		ch <- d
	}
}

func (c consensusCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.cons.Status()
	ch <- prometheus.MustNewConstMetric(descMembers, prometheus.GaugeValue, float64(len(st.Members)))
	ch <- prometheus.MustNewConstMetric(descTerm, prometheus.GaugeValue, float64(st.Term))
	ch <- prometheus.MustNewConstMetric(descCommit, prometheus.GaugeValue, float64(st.CommitIndex))
	ch <- prometheus.MustNewConstMetric(descRole, prometheus.GaugeValue, 1, string(st.Role))
	if st.LeaderID != "" {
		ch <- prometheus.MustNewConstMetric(descLeader, prometheus.GaugeValue, 1, st.LeaderID)
	}
}
