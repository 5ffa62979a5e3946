package scheduler

import "container/heap"

// group is one fingerprint's entries as a heap in decision order, so a
// LEASE reads the best candidate off the top instead of scanning every
// match. Each entry caches its offerable figure; whenever anything its
// machine reports or holds changes, refreshMachineLocked recomputes the
// figures of all that machine's entries and restores their places.
type group []*entry

func (g group) Len() int { return len(g) }

// Less is the decision order of pace-node §6.2: most free slots first, then
// lowest utilization (in-flight / slots), then least recently picked,
// then the endpoint. Among entries with nothing offerable, withdrawn ones
// come first, then compile-budget, then slots, so the top also decides
// which refusal to give: any withdrawn match makes it withdrawn.
func (g group) Less(i, j int) bool {
	a, b := g[i], g[j]
	if a.free != b.free {
		return a.free > b.free
	}
	if a.free == 0 && refusalRank(a.why) != refusalRank(b.why) {
		return refusalRank(a.why) < refusalRank(b.why)
	}
	au, bu := a.machine.inFlight()*b.slots, b.machine.inFlight()*a.slots
	if au != bu {
		return au < bu
	}
	if a.pickSeq != b.pickSeq {
		return a.pickSeq < b.pickSeq
	}
	return a.key.endpoint < b.key.endpoint
}

func refusalRank(l limitedBy) int {
	switch l {
	case limitBudget:
		return 1
	case limitSlots:
		return 2
	}
	return 0
}

func (g group) Swap(i, j int) {
	g[i], g[j] = g[j], g[i]
	g[i].groupIndex, g[j].groupIndex = i, j
}

func (g *group) Push(x any) {
	e := x.(*entry)
	e.groupIndex = len(*g)
	*g = append(*g, e)
}

func (g *group) Pop() any {
	old := *g
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*g = old[:len(old)-1]
	e.groupIndex = -1
	return e
}

// refreshMachineLocked recomputes the offerable figures of a machine's
// entries and restores their heap positions.
func (s *Scheduler) refreshMachineLocked(m *machine) {
	for _, e := range m.entries {
		e.free, e.why = offerable(e)
		if g := s.byFingerprint[e.key.fingerprint]; g != nil && e.groupIndex >= 0 {
			heap.Fix(g, e.groupIndex)
		}
	}
}

// insertEntryLocked adds an entry to its fingerprint's heap.
func (s *Scheduler) insertEntryLocked(e *entry) {
	g := s.byFingerprint[e.key.fingerprint]
	if g == nil {
		g = &group{}
		s.byFingerprint[e.key.fingerprint] = g
	}
	heap.Push(g, e)
}

// deleteEntryLocked removes an entry from its fingerprint's heap.
func (s *Scheduler) deleteEntryLocked(e *entry) {
	g := s.byFingerprint[e.key.fingerprint]
	if g == nil || e.groupIndex < 0 {
		return
	}
	heap.Remove(g, e.groupIndex)
	if g.Len() == 0 {
		delete(s.byFingerprint, e.key.fingerprint)
	}
}
