package scheduler

import "github.com/buildfleet/buildfleet/internal/pace/verbs"

// limitedBy names what bounds an entry's offerable slots: the dashboard's
// "limited-by" column, and the choice between no-capacity (full of this
// fleet's own work) and withdrawn (free on paper, pulled back).
type limitedBy uint8

const (
	limitNone    limitedBy = iota
	limitSlots             // every slot holds a fleet job
	limitBudget            // the worker's compile byte budget is full
	limitCordon            // cordoned by its operator
	limitCPU               // host CPU busy with work that is not the fleet's
	limitMemory            // low available memory
	limitScratch           // low free scratch space
)

var limitNames = [...]string{"", "slots", "compile-budget", "cordon", "cpu", "memory", "scratch"}

func (l limitedBy) String() string { return limitNames[l] }

// full reports a limit of this fleet's own work: answered no-capacity.
func (l limitedBy) full() bool { return l == limitSlots || l == limitBudget }

// maxJobs caps figures derived from peer-reported bytes.
const maxJobs = 1 << 20

// loadLimits are a machine's heartbeat facts turned into slot figures
// once per heartbeat, so a LEASE only compares integers.
type loadLimits struct {
	cores        int // logical cores; 0 when unknown
	external     int // cores busy with work that is not the fleet's
	cpuKnown     bool
	memJobs      int // more compiles available memory allows
	memKnown     bool
	scratchJobs  int // more compiles free scratch allows
	scratchKnown bool
	cordoned     bool
	budgetFull   bool
}

// computeLimits derives the limits from the latest capacity and load. A
// missing figure is unknown and limits nothing; it is neither idle nor
// saturated (pace-node §6.2 step 3). The fleet's own jobs are subtracted from
// the host's busy cores first, so a machine busy with fleet work is full,
// not withdrawn, and the figure does not oscillate.
func computeLimits(c verbs.Capacity, l verbs.Load, reported int, memPerJob, scratchPerJob uint64) loadLimits {
	lim := loadLimits{cordoned: l.Cordoned, budgetFull: l.CompileBudgetFull}
	if cores, ok := c.LogicalCores.Get(); ok && cores > 0 {
		lim.cores = int(min(cores, maxJobs))
		if permille, ok := l.CPUBusyPermille.Get(); ok {
			busy := (int(permille)*lim.cores + 500) / 1000
			lim.external, lim.cpuKnown = max(0, busy-reported), true
		}
	}
	if avail, ok := l.AvailableMemory.Get(); ok {
		lim.memJobs, lim.memKnown = int(min(avail/memPerJob, maxJobs)), true
	}
	if free, ok := l.FreeScratch.Get(); ok {
		lim.scratchJobs, lim.scratchKnown = int(min(free/scratchPerJob, maxJobs)), true
	}
	return lim
}

// offerable is how many more compiles an entry can take now, and what
// limits it. Registered slots minus the machine's in-flight, then reduced
// by external load and cordon (pace-node §6.2 step 3). Memory and scratch
// figures predate the grants made since the heartbeat, so those are taken
// off them.
func offerable(e *entry) (int, limitedBy) {
	m := e.machine
	free := e.slots - m.inFlight()
	switch {
	case free <= 0:
		return 0, limitSlots
	case m.limits.budgetFull:
		return 0, limitBudget
	case m.limits.cordoned:
		return 0, limitCordon
	}
	off, why := free, limitNone
	lim := &m.limits
	if lim.cpuKnown {
		// Cores the machine did not register as slots absorb external
		// load first: a workstation's reserve is for its user.
		spare := max(0, lim.cores-e.slots)
		if c := free - max(0, lim.external-spare); c < off {
			off, why = c, limitCPU
		}
	}
	if c := lim.memJobs - m.pending; lim.memKnown && c < off {
		off, why = c, limitMemory
	}
	if c := lim.scratchJobs - m.pending; lim.scratchKnown && c < off {
		off, why = c, limitScratch
	}
	return max(off, 0), why
}

// Slot derivation for REGISTER slots 0 (pace-node §5.1).
const (
	memoryPerDerivedSlot = 1 << 30
	workstationReserve   = 2
)

// deriveSlots sizes a worker from its capacity record: min(cores, memory
// in GiB) minus the reserve, never below 1.
func deriveSlots(c verbs.Capacity) int {
	cores, ok := c.LogicalCores.Get()
	if !ok {
		return 1
	}
	n := int(min(cores, maxJobs))
	if mem, ok := c.TotalMemory.Get(); ok {
		n = min(n, int(min(mem/memoryPerDerivedSlot, maxJobs)))
	}
	reserve := 0
	if r, ok := c.ReservedCores.Get(); ok {
		reserve = int(min(r, maxJobs))
	} else if class, ok := c.NodeClass.Get(); !ok || verbs.NodeClass(class) != verbs.ClassDedicated {
		reserve = workstationReserve
	}
	return max(1, n-reserve)
}
