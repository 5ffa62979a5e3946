package history

// step is what one step of a view holds: per machine column, the figures summed over machines
// (a gauge as each machine's mean over the step) and whether any machine measured it; per
// leader column, the decisions counted and whether this node led in it.
type step struct {
	sum      [machineCols]float64
	measured [machineCols]bool
	leader   [leaderCols]uint64
	led      bool
}

// addMachine adds machine m's figures to every step of a view starting at start.
func (spec rangeSpec) addMachine(steps []step, start int64, m *machine) {
	r := m.ring(spec.ring)
	for k := range steps {
		from := start + int64(k)*spec.step
		var total [machineCols]uint64
		var n [machineCols]uint32
		m.sums(r, r.period(from), r.period(from+spec.step), &total, &n)
		st := &steps[k]
		for c := range machineCols {
			if n[c] == 0 {
				continue
			}
			st.measured[c] = true
			if machineColumns[c].counter {
				st.sum[c] += float64(total[c])
			} else {
				st.sum[c] += float64(total[c]) / float64(n[c])
			}
		}
	}
}

// addLeader adds the leader's decisions to every step of a view starting at start.
func (spec rangeSpec) addLeader(steps []step, start int64, l *leader) {
	r := l.ring(spec.ring)
	for k := range steps {
		from := start + int64(k)*spec.step
		for c := range leaderCols {
			total, n := l.sum(r, c, r.period(from), r.period(from+spec.step))
			steps[k].leader[c] += total
			steps[k].led = steps[k].led || n > 0
		}
	}
}

func (m *machine) ring(width int64) *ring {
	switch width {
	case Width:
		return &m.minutes
	case hourMs:
		return &m.hours
	}
	return &m.days
}

func (l *leader) ring(width int64) *ring {
	switch width {
	case Width:
		return &l.minutes
	case hourMs:
		return &l.hours
	}
	return &l.days
}

// seriesDef is one chart line: its name, unit and scope and how a step's figure is read.
type seriesDef struct {
	name, unit, scope string
	value             func(*step) (float64, bool)
}

func machineSum(c int) func(*step) (float64, bool) {
	return func(st *step) (float64, bool) { return st.sum[c], st.measured[c] }
}

func leaderSum(ds ...Dispatch) func(*step) (float64, bool) {
	return func(st *step) (float64, bool) {
		var total uint64
		for _, d := range ds {
			total += st.leader[d]
		}
		return float64(total), st.led
	}
}

// cpuBusyPercent is the fleet's busy ticks over all its ticks in the step; unmeasured when no
// tick was counted.
func cpuBusyPercent(st *step) (float64, bool) {
	if !st.measured[colCPUTotal] || st.sum[colCPUTotal] == 0 {
		return 0, false
	}
	return 100 * st.sum[colCPUBusy] / st.sum[colCPUTotal], true
}

var machineSeries = []seriesDef{
	{"hits", "hits", ScopeMachines, machineSum(colHits)},
	{"misses", "misses", ScopeMachines, machineSum(colMisses)},
	{"compiles", "compiles", ScopeMachines, machineSum(colCompiles)},
	{"cpu_busy_percent", "percent", ScopeMachines, cpuBusyPercent},
	// A worker never queues: "queued" is the compiles it refused for want of a free slot.
	{"queued", "compiles", ScopeMachines, machineSum(colRefusedNoSlot)},
	{"offerable_slots", "slots", ScopeMachines, machineSum(colOfferable)},
}

var fallbacks = []Dispatch{FallbackAlreadyInFlight, FallbackNoWorker, FallbackAllExcluded, FallbackNoCapacity,
	FallbackWithdrawn, FallbackSignFailed}

// fleetSeries are the fleet's chart lines: the machine series summed, the dispatch outcomes,
// then each cause of a local fallback on its own.
var fleetSeries = []seriesDef{
	machineSeries[0], machineSeries[1], machineSeries[2],
	{"dispatched", "compiles", ScopeLeader, leaderSum(Dispatched)},
	{"local_fallbacks", "compiles", ScopeLeader, leaderSum(fallbacks...)},
	machineSeries[3], machineSeries[4], machineSeries[5],
	{"fallback_already_in_flight", "compiles", ScopeLeader, leaderSum(FallbackAlreadyInFlight)},
	{"fallback_no_worker", "compiles", ScopeLeader, leaderSum(FallbackNoWorker)},
	{"fallback_all_excluded", "compiles", ScopeLeader, leaderSum(FallbackAllExcluded)},
	{"fallback_no_capacity", "compiles", ScopeLeader, leaderSum(FallbackNoCapacity)},
	{"fallback_withdrawn", "compiles", ScopeLeader, leaderSum(FallbackWithdrawn)},
	{"fallback_sign_failed", "compiles", ScopeLeader, leaderSum(FallbackSignFailed)},
}
