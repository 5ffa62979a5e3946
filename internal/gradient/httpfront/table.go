package httpfront

import (
	"io"
	"time"
)

// phase is what a connection is doing, as net/http's ConnState reports it.
type phase uint8

const (
	phaseNew      phase = iota // accepted, request head not yet complete
	phaseActive                // serving a request
	phaseIdle                  // keep-alive, waiting for the next request
	phaseHijacked              // taken over (a WebSocket session): never evicted
)

// entry is one open connection in the table.
type entry struct {
	addr  string
	phase phase
	since time.Time // when it entered its phase
	conn  io.Closer // what the listener closes to evict it; the table never touches it
}

// verdict is the table's answer to a new connection.
type verdict uint8

const (
	admitted verdict = iota
	refusedPerAddr
	refusedTotal
)

// table decides which connections are admitted and which idle one makes room. It does no
// I/O and reads no clock: the listener calls it under its lock with the time.
type table struct {
	maxTotal, maxPerAddr int
	open                 map[*entry]struct{}
	perAddr              map[string]int
}

func newTable(maxTotal, maxPerAddr int) *table {
	return &table{maxTotal: maxTotal, maxPerAddr: maxPerAddr, open: map[*entry]struct{}{}, perAddr: map[string]int{}}
}

// admit decides on a new connection from addr. When a cap is reached it evicts (removes and
// returns, for the caller to close) the longest-waiting evictable connection that frees room
// — of the same address for the per-address cap — and refuses only when there is none.
func (t *table) admit(addr string, now time.Time) (*entry, *entry, verdict) {
	var evicted *entry
	switch {
	case t.perAddr[addr] >= t.maxPerAddr:
		// One of this address's own makes room, which frees room in the total as well.
		if evicted = t.oldestEvictable(now, addr); evicted == nil {
			return nil, nil, refusedPerAddr
		}
	case len(t.open) >= t.maxTotal:
		if evicted = t.oldestEvictable(now, ""); evicted == nil {
			return nil, nil, refusedTotal
		}
	}
	if evicted != nil {
		t.remove(evicted)
	}
	e := &entry{addr: addr, phase: phaseNew, since: now}
	t.open[e] = struct{}{}
	t.perAddr[addr]++
	return e, evicted, admitted
}

// evictable: idle keep-alives, and connections that have not finished a request head
// within newGrace.
func (e *entry) evictable(now time.Time) bool {
	return e.phase == phaseIdle || e.phase == phaseNew && now.Sub(e.since) >= newGrace
}

// oldestEvictable is the evictable connection that has waited longest, of addr when it is
// not empty.
func (t *table) oldestEvictable(now time.Time, addr string) *entry {
	var best *entry
	for e := range t.open {
		if (addr != "" && e.addr != addr) || !e.evictable(now) {
			continue
		}
		if best == nil || e.since.Before(best.since) {
			best = e
		}
	}
	return best
}

// set records a connection's new phase; a removed entry is left alone.
func (t *table) set(e *entry, p phase, now time.Time) {
	if _, ok := t.open[e]; ok && e.phase != phaseHijacked {
		e.phase, e.since = p, now
	}
}

// remove drops e; it reports whether e was still open.
func (t *table) remove(e *entry) bool {
	if _, ok := t.open[e]; !ok {
		return false
	}
	delete(t.open, e)
	if t.perAddr[e.addr]--; t.perAddr[e.addr] <= 0 {
		delete(t.perAddr, e.addr)
	}
	return true
}
