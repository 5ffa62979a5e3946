package server

import (
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

const (
	workerA = "0193a5c8-7f00-7000-8000-00000000000a"
	workerB = "0193a5c8-7f00-7000-8000-00000000000b"
)

func (r *rig) queueEvaluation() store.Evaluation {
	r.t.Helper()
	ev, err := r.st.CreateEvaluation(ctx, store.NewEvaluation{ProjectID: r.project.ID, Commit: "0123456789012345678901234567890123456789"})
	if err != nil {
		r.t.Fatal(err)
	}
	return ev
}

func assignOf(t *testing.T, m wire.ServerMessage) *wire.AssignJob {
	t.Helper()
	a, ok := m.(*wire.AssignJob)
	if !ok {
		t.Fatalf("got %T %+v, want AssignJob", m, m)
	}
	return a
}

func TestRequestJobListIsOneEmptyFinalPage(t *testing.T) {
	p := newRig(t, Config{}).connect(workerA)
	p.send(&wire.RequestJobList{})
	if m, ok := p.next().(*wire.JobListChunk); !ok || !m.IsFinal || len(m.Candidates) != 0 {
		t.Fatalf("got %+v", m)
	}
}

// TestAnIdleSlotIsFilledWhenAJobArrives: a RequestJob with nothing queued is remembered, and
// the evaluation queued later is assigned to it without another request.
func TestAnIdleSlotIsFilledWhenAJobArrives(t *testing.T) {
	r := newRig(t, Config{})
	p := r.connect(workerA)
	p.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	eventually(t, "the idle slot to be remembered", func() bool {
		w := r.srv.sessions.get(workerA)
		if w == nil {
			return false
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.idle[wire.JobKindFlake] == 1
	})
	ev := r.queueEvaluation()
	r.srv.Kick()
	a := assignOf(t, p.next())
	if a.JobID != "eval:"+ev.ID || a.AssignmentID == "" {
		t.Fatalf("assigned %+v", a)
	}
	if j, ok := a.Job.(*wire.FlakeJob); !ok || len(j.Steps) != 3 {
		t.Fatalf("job %+v", a.Job)
	}
}

// TestADeclinedJobIsOfferedAgain: a decline puts the evaluation back without using an
// attempt, and the next RequestJob gets it under a new assignment.
func TestADeclinedJobIsOfferedAgain(t *testing.T) {
	r := newRig(t, Config{})
	ev := r.queueEvaluation()
	p := r.connect(workerA)
	p.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	first := assignOf(t, p.next())
	p.send(&wire.AssignJobResponse{JobID: first.JobID, Accepted: false, Reason: wire.Some("at capacity (1/1)")})
	eventually(t, "the decline to be applied", func() bool { return r.srv.counters.JobsDeclined.Load() == 1 })
	p.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	second := assignOf(t, p.next())
	if second.JobID != first.JobID || second.AssignmentID == first.AssignmentID {
		t.Fatalf("first %s/%s, second %s/%s", first.JobID, first.AssignmentID, second.JobID, second.AssignmentID)
	}
	got, err := r.st.GetEvaluation(ctx, ev.ID)
	if err != nil || got.Attempts != 0 {
		t.Fatalf("evaluation %+v, %v", got, err)
	}
}

// TestReportsForAssignmentsNotHandedOutAreDropped: a report naming an unknown assignment, or
// another session's, changes nothing and is counted stale.
func TestReportsForAssignmentsNotHandedOutAreDropped(t *testing.T) {
	r := newRig(t, Config{})
	ev := r.queueEvaluation()
	a, b := r.connect(workerA), r.connect(workerB)
	a.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	job := assignOf(t, a.next())
	b.send(&wire.JobUpdate{JobID: job.JobID, AssignmentID: job.AssignmentID, Update: &wire.JobUpdateFetching{}})
	b.send(&wire.JobCompleted{JobID: job.JobID, AssignmentID: job.AssignmentID})
	a.send(&wire.JobFailed{JobID: job.JobID, AssignmentID: "not-an-assignment", Kind: wire.BuildFailureKindPermanent})
	eventually(t, "three stale reports", func() bool { return r.srv.counters.ReportsStale.Load() == 3 })
	got, err := r.st.GetEvaluation(ctx, ev.ID)
	if err != nil || got.Status != store.EvalQueued {
		t.Fatalf("evaluation changed by stale reports: %+v, %v", got, err)
	}
	a.send(&wire.JobUpdate{JobID: job.JobID, AssignmentID: job.AssignmentID, Update: &wire.JobUpdateFetching{}})
	eventually(t, "the real report to apply", func() bool {
		got, _ := r.st.GetEvaluation(ctx, ev.ID)
		return got.Status == store.EvalFetching
	})
}

// TestALostWorkersJobIsRequeued: when the session drops, its open assignment is abandoned
// and the job goes to the next worker that asks.
func TestALostWorkersJobIsRequeued(t *testing.T) {
	r := newRig(t, Config{})
	r.queueEvaluation()
	a := r.connect(workerA)
	a.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	first := assignOf(t, a.next())
	a.c.Abort()
	eventually(t, "the session to end", func() bool { return r.srv.sessions.get(workerA) == nil })
	b := r.connect(workerB)
	b.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	if second := assignOf(t, b.next()); second.JobID != first.JobID || second.AssignmentID == first.AssignmentID {
		t.Fatalf("re-queued job %+v after %+v", second, first)
	}
	workers, err := r.st.ListWorkers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range workers {
		if w.WorkerID == workerA && w.OfflineReason == "" {
			t.Fatal("the lost worker has no offline reason")
		}
	}
}

// TestASilentWorkerIsDropped: the liveness pass ends a session that sends nothing for the
// heartbeat timeout.
func TestASilentWorkerIsDropped(t *testing.T) {
	r := newRig(t, Config{HeartbeatTimeout: time.Second})
	p := r.connect(workerA)
	if _, err := p.read(15 * time.Second); err == nil {
		t.Fatal("the silent session got a message instead of being closed")
	}
	eventually(t, "the drop to be counted", func() bool { return r.srv.counters.WorkersSilent.Load() == 1 })
	eventually(t, "the slot to be freed", func() bool { return r.srv.sessions.get(workerA) == nil })
}

// TestShutdownDrainsEverySession: SIGTERM's Shutdown sends Draining and closes the session.
func TestShutdownDrainsEverySession(t *testing.T) {
	r := newRig(t, Config{})
	p := r.connect(workerA)
	// InitAck reaches the worker before the server attaches the session: a Shutdown in
	// between finds no session to drain.
	eventually(t, "the session to be live", func() bool { return r.srv.sessions.get(workerA) != nil })
	go r.srv.Shutdown(ctx)
	if m := p.next(); m == nil {
		t.Fatal("no message")
	} else if _, ok := m.(*wire.ServerDraining); !ok {
		t.Fatalf("got %T, want Draining", m)
	}
	if _, err := p.read(5 * time.Second); err == nil {
		t.Fatal("the session stayed open after Draining")
	}
}
