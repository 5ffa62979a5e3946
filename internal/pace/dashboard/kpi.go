package dashboard

import (
	"github.com/buildfleet/buildfleet/internal/pace/scheduler"
)

func num(v float64) *float64 { return &v }

// kpis are the figures at the top of the page. Counters are this leader's, since it started;
// machine figures are summed over Machines, the grain to total a fleet over (Workers would
// count a machine once per toolchain).
func kpis(f Facts) map[string]KPI {
	c, snap := f.Counts, f.Scheduler
	asked := float64(c.Granted + c.leaseRefusals())
	var slots, inFlight int
	var hits, lookups uint64
	for _, m := range snap.Machines {
		slots += m.Slots
		inFlight += m.InFlight
		h, okH := m.Load.Cache.Hits.Get()
		miss, okM := m.Load.Cache.Misses.Get()
		if okH && okM {
			hits, lookups = hits+h, lookups+h+miss
		}
	}
	k := map[string]KPI{
		"dispatched":         {Value: num(float64(c.Granted)), Unit: "leases", Of: num(asked)},
		"compiling-now":      {Value: num(float64(inFlight)), Unit: "compiles", Of: num(float64(slots))},
		"cache-hit-rate":     {Unit: "percent", Of: num(float64(lookups))},
		"refused":            {Value: num(float64(c.leaseRefusals())), Unit: "leases", Of: num(asked)},
		"leases-outstanding": {Value: num(float64(snap.LeasesOutstanding)), Unit: "leases"},
		"oldest-heartbeat":   {Unit: "seconds", Of: num(scheduler.DefaultHeartbeatTimeout.Seconds())},
		"never-picked":       {Value: num(float64(neverPicked(snap.Workers))), Unit: "workers", Of: num(float64(len(snap.Workers)))},
	}
	if lookups > 0 {
		k["cache-hit-rate"] = KPI{Value: num(100 * float64(hits) / float64(lookups)), Unit: "percent", Of: num(float64(lookups))}
	}
	if len(snap.Machines) > 0 {
		oldest := snap.Machines[0].LastSeenAge
		for _, m := range snap.Machines[1:] {
			oldest = max(oldest, m.LastSeenAge)
		}
		k["oldest-heartbeat"] = KPI{Value: num(float64(seconds(oldest))), Unit: "seconds", Of: k["oldest-heartbeat"].Of}
	}
	return k
}

func neverPicked(ws []scheduler.WorkerRow) int {
	n := 0
	for _, w := range ws {
		if !w.Picked {
			n++
		}
	}
	return n
}
