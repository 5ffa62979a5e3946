package node

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/discovery"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// Bounds on what discovery hands formation.
const (
	maxForeign      = 64               // other clusters remembered
	foreignStale    = 15 * time.Minute // a fleet not re-proved this long is forgotten (proofs stand 5 min)
	foreignLogEvery = 10 * time.Minute // foreign-fleet-visible is logged at most this often per fleet
)

// discoveredFleets are the other clusters discovery proved on the segment, judged by the
// encounter table (pace-node §9.2): the ones this node would yield to, and the established
// fleets it only sees.
type discoveredFleets struct {
	mu      sync.Mutex
	engine  *discovery.Engine
	yield   map[string]yieldCandidate // by the summary's cluster id
	visible map[string]time.Time      // foreign fleets seen while established, last logged
}

// yieldCandidate is a fleet this node would yield to. cluster is "" when it was learned from
// a pending node, a pointer to a fleet whose id only its leader tells.
type yieldCandidate struct {
	cluster        string
	leaderEndpoint string
	leaderKey      []byte
	established    bool
	createdAt      uint64
	seen           time.Time
}

// startDiscovery opens discovery's two sockets (the plan's discovery rows) unless it is off.
func (n *Node) startDiscovery(ctx context.Context) error {
	d := n.plan.Cfg.Discovery
	if d.Off {
		return nil
	}
	e, err := discovery.Start(ctx, discovery.Config{Key: n.id.Key, Summary: n.summary, Roster: n.roster(),
		OnForeign: n.foreignProven, Targets: d.Targets, BeaconPort: d.beaconPort(), ReplyPort: d.ReplyPort,
		Log: n.log, Now: n.now})
	if err != nil {
		return err
	}
	n.discovered.engine = e
	n.log.Info("discovery on: beacons every 15 s; peers answer on the reply port, which must be allowed inbound",
		"beacon", e.BeaconAddr(), "reply", e.ReplyAddr(), "targets", e.Targets(), "cluster", n.cons.State().ClusterID(),
		"consensus", orNone(n.consensusEndpoint()))
	return nil
}

func (n *Node) discoveryOn() bool { return !n.plan.Cfg.Discovery.Off }

// foreignProven judges another cluster's proven summary: discovery admits nobody, it only
// tells formation what it saw.
func (n *Node) foreignProven(p discovery.Proven) {
	self := n.summary()
	switch encounter(self, p.Summary, n.plan.Cfg.FleetID.ClusterID) {
	case yield:
		n.discovered.remember(candidateOf(p))
	case refusedPin:
		n.counters.formationYieldsRefusedPin.Add(1)
	case foreignVisible:
		if n.discovered.firstSightingInAWhile(p.Summary.ClusterID, n.now()) {
			n.log.Warn("foreign-fleet-visible: another established fleet answers on this segment; neither yields (merge them by hand if they should be one)",
				"fleet", p.Summary.ClusterID, "node", p.Summary.NodeID, "from", p.From, "key", edkey.Text(p.Key))
		}
	}
}

// candidateOf is where to ask to join the fleet p proves: its leader, whose key the proving
// member named (or the proving node itself, when it leads).
func candidateOf(p discovery.Proven) yieldCandidate {
	s := p.Summary
	c := yieldCandidate{cluster: s.ClusterID, leaderEndpoint: s.LeaderNodeEndpoint, leaderKey: s.LeaderKey,
		established: s.State != verbs.FleetSolitary, createdAt: s.CreatedAt, seen: p.At}
	if s.LeaderID == s.NodeID || c.leaderEndpoint == "" {
		c.leaderEndpoint, c.leaderKey = s.NodeEndpoint, p.Key
	}
	if s.State == verbs.FleetPending {
		c.cluster, c.createdAt = "", 0 // a pointer: the fleet asked, named by its leader slots
		c.leaderEndpoint, c.leaderKey = s.LeaderNodeEndpoint, s.LeaderKey
	}
	return c
}

func (d *discoveredFleets) remember(c yieldCandidate) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.yield == nil {
		d.yield = map[string]yieldCandidate{}
	}
	key := c.cluster + "@" + c.leaderEndpoint
	if _, known := d.yield[key]; !known && len(d.yield) >= maxForeign {
		return
	}
	d.yield[key] = c
}

// yieldCandidates are the fleets this node would yield to, best first: established fleets,
// then the oldest cluster; fleets not re-proved lately are dropped.
func (d *discoveredFleets) yieldCandidates() []yieldCandidate {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []yieldCandidate
	for k, c := range d.yield {
		if time.Since(c.seen) > foreignStale {
			delete(d.yield, k)
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b yieldCandidate) int {
		if a.established != b.established {
			return map[bool]int{true: -1, false: 1}[a.established]
		}
		return cmp.Or(cmp.Compare(a.createdAt, b.createdAt), bytes.Compare([]byte(a.cluster), []byte(b.cluster)))
	})
	return out
}

func (d *discoveredFleets) firstSightingInAWhile(cluster string, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.visible == nil {
		d.visible = map[string]time.Time{}
	}
	if last, ok := d.visible[cluster]; ok && now.Sub(last) < foreignLogEvery {
		return false
	}
	if len(d.visible) >= maxForeign {
		clear(d.visible)
	}
	d.visible[cluster] = now
	return true
}

// recentlyVisible are the foreign established fleets seen within the last 15 minutes.
func (d *discoveredFleets) recentlyVisible(now time.Time) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for cluster, at := range d.visible {
		if now.Sub(at) < foreignStale {
			out = append(out, cluster)
		}
	}
	slices.Sort(out)
	return out
}

func (d *discoveredFleets) close() {
	if d.engine != nil {
		d.engine.Close()
	}
}
