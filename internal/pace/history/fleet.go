package history

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// MaxMachines bounds the machines a Fleet keeps rings for. Each takes about 560 KiB (seven
// series × 2,560 slots of 32 bytes), allocated whole when the machine is first heard of, so
// the bound caps the rings at about 140 MiB; a machine beyond it displaces the one heard from
// least recently.
const MaxMachines = 256

// Fleet is the leader's history: every machine's rings, filled from the buckets machines hand
// over whoever led when they were sampled, and the dispatch outcomes this node counted while
// it led. Buckets arrive de-duplicated by the scheduler's per-machine high-water mark, and a
// minute a machine's ring holds already is ignored, so a redelivery is never counted twice
// either way. The zero Fleet is empty and ready.
type Fleet struct {
	mu       sync.Mutex // guards machines
	machines map[string]*machine
	leaderMu sync.Mutex // guards leader, apart, so a LEASE never waits on a machine's view
	leader   *leader
	changes  atomic.Uint64
}

// Add records buckets delivered by nodeID.
func (f *Fleet) Add(nodeID string, buckets []Bucket) {
	if len(buckets) == 0 || nodeID == "" || len(nodeID) > verbs.MaxID {
		return // proven node ids are 1..MaxID bytes; the file could not name another
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.machineLocked(nodeID)
	for _, b := range buckets {
		if m.add(b) {
			f.changes.Add(1)
		}
	}
}

// machineLocked is nodeID's rings, made (displacing the machine heard from least recently
// when MaxMachines are kept) on first use.
func (f *Fleet) machineLocked(nodeID string) *machine {
	if m := f.machines[nodeID]; m != nil {
		return m
	}
	if f.machines == nil {
		f.machines = map[string]*machine{}
	}
	if len(f.machines) >= MaxMachines {
		oldest, at := "", int64(math.MaxInt64)
		for id, m := range f.machines {
			if n := m.newest(); n < at || oldest == "" {
				oldest, at = id, n
			}
		}
		delete(f.machines, oldest)
	}
	m := newMachine()
	f.machines[nodeID] = m
	return m
}

// Leading records that this node leads at now: the minute is measured, its dispatch series 0
// until a LEASE is decided in it, rather than a gap.
func (f *Fleet) Leading(now time.Time) {
	f.leaderMu.Lock()
	defer f.leaderMu.Unlock()
	f.leaderLocked().touch(floorDiv(now.UnixMilli(), Width))
	f.changes.Add(1)
}

// Decided counts one LEASE outcome at now, live into the current minute. The node calls it
// only while it leads.
func (f *Fleet) Decided(d Dispatch, now time.Time) {
	if d >= dispatchOutcomes {
		return
	}
	f.leaderMu.Lock()
	defer f.leaderMu.Unlock()
	f.leaderLocked().count(d, floorDiv(now.UnixMilli(), Width))
	f.changes.Add(1)
}

func (f *Fleet) leaderLocked() *leader {
	if f.leader == nil {
		f.leader = newLeader()
	}
	return f.leader
}

// Machines lists the machines with rings, sorted.
func (f *Fleet) Machines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]string, 0, len(f.machines))
	for id := range f.machines {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Changes counts what was recorded since the Fleet was made, so a writer can tell whether
// there is anything new to save.
func (f *Fleet) Changes() uint64 { return f.changes.Load() }
