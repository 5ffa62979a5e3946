package worker

import (
	"sync"
	"time"
)

// budget is the worker-wide in-flight byte budget B (pace-node §5.2). A request
// is charged from admission until its reply has been written, so the
// figure covers every byte a running compile can hold, not only the ones
// being read.
type budget struct {
	limit uint64
	now   func() time.Time

	mu       sync.Mutex
	used     uint64
	lastBusy time.Time // last endpoint-busy refusal, for BudgetLimited
}

func newBudget(limit uint64, now func() time.Time) *budget {
	return &budget{limit: limit, now: now}
}

// grow raises a charge from held to want bytes; false (and the charge
// unchanged) when the extra does not fit in what is left. A refusal is
// remembered for the budget-limited heartbeat flag.
func (b *budget) grow(held, want uint64) bool {
	if want <= held {
		return true
	}
	extra := want - held
	b.mu.Lock()
	defer b.mu.Unlock()
	if extra > b.limit-b.used {
		b.lastBusy = b.now()
		return false
	}
	b.used += extra
	return true
}

// release returns n charged bytes.
func (b *budget) release(n uint64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// inUse is the bytes charged now.
func (b *budget) inUse() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// limited reports whether the budget, not the slots, turned work away
// within window while charged work still holds it: the dashboard's
// `limited-by: compile-budget` and the load record's CompileBudgetFull.
func (b *budget) limited(window time.Duration) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used > 0 && !b.lastBusy.IsZero() && b.now().Sub(b.lastBusy) <= window
}

// charge is one request's hold on the budget.
type charge struct {
	b    *budget
	held uint64
}

// to raises the charge to want bytes.
func (c *charge) to(want uint64) bool {
	if !c.b.grow(c.held, want) {
		return false
	}
	c.held = max(c.held, want)
	return true
}

// release gives the whole charge back; later calls do nothing.
func (c *charge) release() {
	c.b.release(c.held)
	c.held = 0
}

// slots is the worker's compile slots: taken without waiting, so request
// slots+1 is refused at once and nothing queues.
type slots struct {
	mu   sync.Mutex
	max  int
	busy int
}

func (s *slots) tryAcquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy >= s.max {
		return false
	}
	s.busy++
	return true
}

func (s *slots) release() {
	s.mu.Lock()
	s.busy--
	s.mu.Unlock()
}

func (s *slots) inUse() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy
}
