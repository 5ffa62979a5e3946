package scheduler

import (
	"container/heap"
	"time"
)

// leaseHeap orders outstanding leases by expiry for the sweep.
type leaseHeap []*lease

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].expiresAt.Before(h[j].expiresAt) }
func (h leaseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex, h[j].heapIndex = i, j
}
func (h *leaseHeap) Push(x any) {
	l := x.(*lease)
	l.heapIndex = len(*h)
	*h = append(*h, l)
}
func (h *leaseHeap) Pop() any {
	old := *h
	l := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	l.heapIndex = -1
	return l
}

// addLeaseLocked records a grant against its machine's pending count.
func (s *Scheduler) addLeaseLocked(l *lease) {
	s.leases[l.key] = l
	heap.Push(&s.expiry, l)
	l.gen = l.machine.gen
	l.machine.pending++
	s.refreshMachineLocked(l.machine)
}

// removeLeaseLocked forgets a lease. released says its compile is over
// (RELEASE): a grant the last heartbeat already covered lowers the
// reported figure. An expiry or reclaim only takes back a pending grant,
// since a heartbeat after the grant already said what is running.
func (s *Scheduler) removeLeaseLocked(l *lease, released bool) {
	if s.leases[l.key] == l {
		delete(s.leases, l.key)
	}
	if l.heapIndex >= 0 {
		heap.Remove(&s.expiry, l.heapIndex)
	}
	m := l.machine
	switch {
	case l.gen == m.gen:
		m.pending = max(0, m.pending-1)
	case released:
		m.reported = max(0, m.reported-1)
	}
	s.refreshMachineLocked(m)
}

// expireLeaseLocked frees an expired lease, remembering it so that a
// release arriving late is counted as such.
func (s *Scheduler) expireLeaseLocked(l *lease) {
	s.removeLeaseLocked(l, false)
	if l.token != "" {
		s.retired.add(l.token, l.key)
	}
}

// expireEntryLocked drops an entry that stopped heartbeating and reclaims
// its leases.
func (s *Scheduler) expireEntryLocked(e *entry) {
	s.removeEntryLocked(e)
	s.counters.WorkersExpired.Add(1)
	for _, l := range s.leases {
		if l.entryID == e.id {
			s.removeLeaseLocked(l, false)
			s.counters.LeasesReclaimed.Add(1)
		}
	}
}

// Sweep drops entries with no heartbeat within the timeout (reclaiming
// their leases), frees expired leases, and forgets machines nothing has
// heard from. The node calls it every few seconds; decisions never depend
// on it having run, since they check liveness and expiry themselves.
func (s *Scheduler) Sweep() {
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if !s.live(e, now) {
			s.expireEntryLocked(e)
		}
	}
	for len(s.expiry) > 0 && now.After(s.expiry[0].expiresAt) {
		s.expireLeaseLocked(s.expiry[0])
	}
	for id, m := range s.machines {
		if len(m.entries) == 0 && now.Sub(m.lastSeen) > s.cfg.HeartbeatTimeout {
			delete(s.machines, id)
		}
	}
	for fp, u := range s.unserved {
		if now.Sub(u.lastSeen) > unservedMemory {
			delete(s.unserved, fp)
		}
	}
}

// unservedMemory is how long an unserved toolchain stays on the list.
const unservedMemory = 10 * time.Minute

// retiredLeases remembers the most recently expired leases by token, in a
// ring, so a late RELEASE is told apart from an unknown one.
type retiredLeases struct {
	byToken map[string]string // token → key
	ring    []string
	next    int
}

func newRetiredLeases(capacity int) retiredLeases {
	return retiredLeases{byToken: make(map[string]string, capacity), ring: make([]string, capacity)}
}

func (r *retiredLeases) add(token, key string) {
	if old := r.ring[r.next]; old != "" {
		delete(r.byToken, old)
	}
	r.ring[r.next] = token
	r.byToken[token] = key
	r.next = (r.next + 1) % len(r.ring)
}

// take reports whether token and key name a remembered expired lease, and
// forgets it so a repeated release is not counted twice.
func (r *retiredLeases) take(token, key string) bool {
	k, ok := r.byToken[token]
	if !ok || k != key {
		return false
	}
	delete(r.byToken, token)
	return true
}

// DropRevoked removes the registrations of every machine whose key revoked reports revoked (a
// forgotten machine, pace-consensus §7.6), with their leases, so nothing is granted to it from
// its next decision on. It returns how many entries went.
func (s *Scheduler) DropRevoked(revoked func(key []byte) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	dropped := 0
	for id, m := range s.machines {
		if len(m.key) == 0 || !revoked(m.key) {
			continue
		}
		for _, e := range append([]*entry(nil), m.entries...) {
			s.expireEntryLocked(e)
			dropped++
		}
		delete(s.machines, id)
	}
	return dropped
}
