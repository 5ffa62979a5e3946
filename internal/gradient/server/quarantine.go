package server

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// quarantineAfter is how many set-up failures in a row quarantine a worker.
const quarantineAfter = 3

// A set-up failure is a job the worker gave back because of its own machine (no build users,
// store not writable, disk full …): JobFailed{Canceled} from a session that is not draining
// (a stopping worker sends Draining before its Canceled reports, gradient-server §6.6). The
// job returns to the queue without spending an attempt either way; the failure counts against
// the worker. quarantineAfter of them in a row quarantine it: it is assigned nothing, its
// session is drained so that it probes its Nix again, and the quarantine lasts until it comes
// back with a new session. A completed job, or a failure that is the job's, ends the run.
type quarantine struct {
	mu      sync.Mutex
	strikes map[string]strikes // by worker ID; outlives sessions
}

type strikes struct {
	inARow int
	reason string // the last failure's error, as the worker sent it
}

func newQuarantine() *quarantine { return &quarantine{strikes: map[string]strikes{}} }

// setupFailed counts one set-up failure; it reports true when this one quarantines the worker.
func (q *quarantine) setupFailed(workerID, reason string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.strikes[workerID]
	s.inARow++
	s.reason = truncateReason(reason)
	q.strikes[workerID] = s
	return s.inARow == quarantineAfter
}

// jobEnded ends a run of set-up failures: the worker finished a job, or failed one on its own
// merits.
func (q *quarantine) jobEnded(workerID string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.strikes, workerID)
}

// reason is why the worker is quarantined, or "".
func (q *quarantine) reason(workerID string) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if s := q.strikes[workerID]; s.inARow >= quarantineAfter {
		return s.reason
	}
	return ""
}

// lift ends a quarantine when the worker starts a new session: it probed its Nix again to
// come back, and offers only what the probe found working.
func (q *quarantine) lift(workerID string) { q.jobEnded(workerID) }

// quarantineReason is why this worker gets no jobs it registered for: the server's quarantine,
// or else what the worker said its Nix cannot do. Called with w.mu held.
func (w *worker) quarantineReason() string {
	return cmp.Or(w.srv.quarantine.reason(w.id), w.unavailable.String())
}

// countFailure feeds a JobFailed to the worker's run of set-up failures; the one that
// quarantines it ends the session. draining is whether the worker had sent Draining before
// this report (its Canceled reports are then a stop, not a set-up failure).
func (w *worker) countFailure(m *wire.JobFailed, draining bool) {
	q := w.srv.quarantine
	if m.Kind != wire.BuildFailureKindCanceled || draining {
		q.jobEnded(w.id)
		return
	}
	w.srv.counters.SetupFailures.Add(1)
	w.log.Warn("the worker gave a job back: its own set-up failed", "error", m.Error)
	if q.setupFailed(w.id, m.Error) {
		w.quarantined(q.reason(w.id))
	}
}

// quarantineCloseTimeout bounds the Draining and close of a quarantined worker's session.
const quarantineCloseTimeout = 2 * time.Second

// quarantined stops assigning to the worker and drains its session; the session's end keeps
// the reason as the worker's offline reason until it reconnects.
func (w *worker) quarantined(reason string) {
	w.srv.counters.WorkersQuarantined.Add(1)
	w.log.Warn("quarantining the worker: set-up failures in a row", "count", quarantineAfter, "reason", reason)
	w.mu.Lock()
	w.idle = [2]int{}
	w.mu.Unlock()
	cause := &quarantinedError{reason: reason}
	w.endingBecause(cause)
	ctx, cancel := context.WithTimeout(context.Background(), quarantineCloseTimeout)
	defer cancel()
	_ = w.send(ctx, &wire.ServerDraining{})
	_ = w.conn.Close(ctx)
	w.cancelCause(cause)
}

// quarantinedError ends a quarantined worker's session.
type quarantinedError struct{ reason string }

func (e *quarantinedError) Error() string { return "quarantined: " + e.reason }
