package node

import (
	"os"

	"github.com/buildfleet/buildfleet/internal/pace/store"
	"github.com/buildfleet/buildfleet/internal/pace/thismachine"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/worker"
)

// capacity is this machine's capacity record for REGISTER (pace-node §6.1): what the machine
// is — cores, memory, node class, the reserve asked for, the software version, its cache
// budgets, a display name and its interface addresses (so the scheduler can tell a client's
// route to it from another machine's).
func (n *Node) capacity(label string) verbs.Capacity {
	var tiers store.Stats
	if n.tier != nil {
		tiers = n.tier.Stats()
	}
	hostname, _ := os.Hostname()
	return capacityRecord(label, n.plan.Cfg.Worker, n.host, tiers, hostname, interfaceAddrs())
}

// capacityRecord assembles the record from its sources. A reserve is sent only when
// --reserve-cores gave one: absent means the class default, which the class already says.
func capacityRecord(label string, w worker.Flags, h worker.Host, tiers store.Stats, hostname string, addrs []string) verbs.Capacity {
	c := verbs.Capacity{Version: Version, ToolchainLabel: label, NodeClass: verbs.Some(uint8(w.NodeClass.Class)),
		CacheTiers: []verbs.TierLimit{tierLimit(tiers.Memory), tierLimit(tiers.Disk)}, InterfaceAddrs: addrs}
	if h.LogicalCores > 0 {
		c.LogicalCores = verbs.Some(uint32(h.LogicalCores))
	}
	if h.MemoryTotal > 0 {
		c.TotalMemory = verbs.Some(h.MemoryTotal)
	}
	if reserve, given := w.ReserveCores.Get(); given {
		c.ReservedCores = verbs.Some(uint32(max(reserve, 0)))
	}
	if len(hostname) <= verbs.MaxDisplayName {
		c.DisplayName = hostname
	}
	return c
}

func tierLimit(t store.TierStats) verbs.TierLimit {
	if !t.Enabled {
		return verbs.TierLimit{}
	}
	return verbs.TierLimit{Present: true, BytesLimit: uint64(max(t.Limit, 0))}
}

// interfaceAddrs are this machine's unicast addresses other than loopback and link-local, at
// most as many as the record carries.
func interfaceAddrs() []string {
	all, err := thismachine.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range all {
		if a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsMulticast() {
			continue
		}
		if out = append(out, a.String()); len(out) == verbs.MaxInterfaceAddrs {
			break
		}
	}
	return out
}
