package worker

import (
	"fmt"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Log limits per build (gradient-server §6.3).
const (
	LogBytesPerMinute = 8 << 20
	LogBytesPerHour   = 64 << 20
)

// logBudget applies the per-minute and per-hour limits to one build's log. It is pure: the
// caller passes the time. Once a limit is hit the rest of the log is dropped.
type logBudget struct {
	perMinute, perHour   int
	minuteStart          time.Time
	hourStart            time.Time
	minuteUsed, hourUsed int
	truncated            bool
}

// admit returns how many of n bytes written at now may be forwarded, and whether this call
// is the one that hit a limit (the caller then appends the truncation note once).
func (b *logBudget) admit(now time.Time, n int) (allowed int, hitLimit bool) {
	if b.truncated {
		return 0, false
	}
	if b.minuteStart.IsZero() || now.Sub(b.minuteStart) >= time.Minute {
		b.minuteStart, b.minuteUsed = now, 0
	}
	if b.hourStart.IsZero() || now.Sub(b.hourStart) >= time.Hour {
		b.hourStart, b.hourUsed = now, 0
	}
	allowed = min(n, b.perMinute-b.minuteUsed, b.perHour-b.hourUsed)
	b.minuteUsed += allowed
	b.hourUsed += allowed
	if allowed < n {
		b.truncated = true
		return allowed, true
	}
	return allowed, false
}

// logForwarder is the io.Writer a build's stderr goes to: it forwards the bytes as
// LogChunk{task_index: 0} on the bulk lane within the budget and appends one truncation note
// when the budget runs out.
type logForwarder struct {
	mu     sync.Mutex
	jobID  string
	send   func(wire.ClientMessage) error
	budget logBudget
	now    func() time.Time
	err    error // the first send failure; later writes are dropped
}

func newLogForwarder(jobID string, send func(wire.ClientMessage) error) *logForwarder {
	return &logForwarder{jobID: jobID, send: send, now: time.Now,
		budget: logBudget{perMinute: LogBytesPerMinute, perHour: LogBytesPerHour}}
}

// Write never fails: a log that cannot be forwarded must not fail the build.
func (f *logForwarder) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return len(p), nil
	}
	allowed, hit := f.budget.admit(f.now(), len(p))
	if allowed > 0 {
		f.forward(p[:allowed])
	}
	if hit {
		note := fmt.Sprintf("\n[gradient-worker: log truncated: over %d MiB per minute or %d MiB per hour]\n",
			f.budget.perMinute>>20, f.budget.perHour>>20)
		f.forward([]byte(note))
	}
	return len(p), nil
}

func (f *logForwarder) forward(b []byte) {
	if err := f.send(&wire.LogChunk{JobID: f.jobID, TaskIndex: 0, Data: b}); err != nil {
		f.err = err
	}
}
