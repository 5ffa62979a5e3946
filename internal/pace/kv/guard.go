package kv

import (
	"net/netip"
	"sync"
	"time"
)

// Failed AUTH handling (pace-node §11). Every check a source makes while it
// has failures on record takes a slot of its own, spaced by a step that
// grows with those failures, so a source guesses at most 1/authStep times
// a second however many connections it pipelines on. A connection's own
// checks wait longer after each of its failures, and it is closed after
// authConnMax of them.
const (
	authStep     = 10 * time.Millisecond  // per failure on record, between a source's checks
	authStepMax  = time.Second            // the step's ceiling
	authQueueMax = 3 * time.Second        // a check whose slot is further off is refused unchecked
	authForget   = 10 * time.Minute       // a source with no failure this long starts afresh
	authConnWait = 100 * time.Millisecond // before a connection's second check, doubled after each failure
	authConnMax  = 5                      // failures on one connection before it is closed
	maxSources   = 4096                   // sources on record; beyond, new ones share one record
)

// source is one address's record of failures.
type source struct {
	failures int
	last     time.Time // the latest failure
	next     time.Time // the earliest slot for its next check
}

// authGuard keeps the failure records. Its decisions read the injected clock; the caller waits.
type authGuard struct {
	now func() time.Time

	mu       sync.Mutex
	sources  map[netip.Addr]*source
	overflow source // shared by new sources while the table is full of live records
}

func newAuthGuard(now func() time.Time) *authGuard {
	return &authGuard{now: now, sources: map[netip.Addr]*source{}}
}

// ticket is one check's place: free when its source had no failure on record when it asked.
type ticket struct {
	src  netip.Addr
	wait time.Duration
	free bool
}

// reserve places a check from src on a connection that has failed connFailures times: how
// long to wait before checking, or false when the source's queue is longer than authQueueMax
// (the check is then refused without comparing anything).
func (g *authGuard) reserve(src netip.Addr, connFailures int) (ticket, bool) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	t := ticket{src: src, wait: connWait(connFailures)}
	s := g.lookup(src, now, false)
	if s == nil || s.failures == 0 {
		t.free = true
		return t, true
	}
	// The slot is after the connection's own wait too, so slots stay in order and apart.
	at := now.Add(t.wait)
	if at.Before(s.next) {
		at = s.next
	}
	if at.Sub(now) > authQueueMax {
		return t, false
	}
	s.next = at.Add(step(s.failures))
	t.wait = at.Sub(now)
	return t, true
}

// check runs compare for a ticket whose wait is over and records a failure. A free ticket
// whose source failed meanwhile must queue like the rest: false, run says to reserve again.
func (g *authGuard) check(t ticket, compare func() bool) (match, run bool) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.free {
		if s := g.lookup(t.src, now, false); s != nil && s.failures > 0 {
			return false, false
		}
	}
	if compare() {
		return true, true
	}
	s := g.lookup(t.src, now, true)
	s.failures++
	s.last = now
	if next := now.Add(step(s.failures)); s.next.Before(next) {
		s.next = next
	}
	return false, true
}

// failures is src's count on record, for the log.
func (g *authGuard) failures(src netip.Addr) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.lookup(src, g.now(), false); s != nil {
		return s.failures
	}
	return 0
}

// lookup finds src's record (nil when absent and not create), forgetting a stale one.
func (g *authGuard) lookup(src netip.Addr, now time.Time, create bool) *source {
	s := g.sources[src]
	if s == nil && g.overflow.failures > 0 && len(g.sources) >= maxSources {
		s = &g.overflow
	}
	if s != nil && now.Sub(s.last) > authForget {
		*s = source{}
	}
	if s != nil || !create {
		return s
	}
	if len(g.sources) >= maxSources {
		g.sweep(now)
	}
	if len(g.sources) >= maxSources {
		return &g.overflow
	}
	s = &source{}
	g.sources[src] = s
	return s
}

// sweep drops forgotten records.
func (g *authGuard) sweep(now time.Time) {
	for a, s := range g.sources {
		if now.Sub(s.last) > authForget {
			delete(g.sources, a)
		}
	}
}

// step is the spacing between a source's checks: authStep per failure, at most authStepMax.
func step(failures int) time.Duration {
	return min(time.Duration(max(failures, 1))*authStep, authStepMax)
}

// connWait is the wait before a connection's next check: none before its first, then
// authConnWait doubling with each failure.
func connWait(failures int) time.Duration {
	if failures == 0 {
		return 0
	}
	return authConnWait << min(failures-1, 10)
}

// logLimiter lets through at most burst log lines per window and counts the rest, so a
// guessing storm cannot flood the log.
type logLimiter struct {
	window time.Duration
	burst  int

	mu         sync.Mutex
	start      time.Time
	n          int
	suppressed int
}

// allow reports whether a line may be written now, and how many were suppressed since the
// last one that was.
func (l *logLimiter) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.start) >= l.window {
		l.start, l.n = now, 0
	}
	if l.n >= l.burst {
		l.suppressed++
		return false, 0
	}
	l.n++
	s := l.suppressed
	l.suppressed = 0
	return true, s
}
