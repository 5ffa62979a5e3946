package server

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// TestJobsAbortedCountsOnlyAbortJobsSent: Apply counts an AbortJob when it reached the
// session's queue, and not when the send failed (a session whose socket is gone).
func TestJobsAbortedCountsOnlyAbortJobsSent(t *testing.T) {
	r := newRig(t, Config{})
	p := r.connect(workerA)
	var w *worker
	eventually(t, "the session to run", func() bool { w = r.srv.sessions.get(workerA); return w != nil })
	job := store.JobRef{Kind: store.JobBuild, ID: "0190a000-0000-7000-8000-000000000001"}
	closed := store.Effects{Closed: []store.OpenAssignment{{AssignmentID: "a1", Job: job, WorkerID: workerA}}}

	r.srv.Apply(ctx, closed)
	if m, ok := p.next().(*wire.AbortJob); !ok || m.JobID != job.String() {
		t.Fatalf("the worker got %#v, want AbortJob for %s", m, job)
	}
	if n := r.srv.counters.JobsAborted.Load(); n != 1 {
		t.Fatalf("JobsAborted = %d after one AbortJob sent, want 1", n)
	}

	// The socket goes and the session ends; put it back in the registry so Apply finds a
	// session whose send fails, as it would in the moment before the session is released.
	w.conn.Abort()
	eventually(t, "the session to end", func() bool { return r.srv.sessions.get(workerA) == nil })
	r.srv.sessions.attach(w)
	defer r.srv.sessions.release(workerA, w)
	r.srv.Apply(ctx, closed)
	if n := r.srv.counters.JobsAborted.Load(); n != 1 {
		t.Fatalf("JobsAborted = %d after a failed send, want still 1", n)
	}
}
