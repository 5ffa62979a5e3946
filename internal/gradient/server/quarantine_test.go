package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/health"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

const setupError = "worker set-up: the group 'nixbld' specified in 'build-users-group' does not exist (fix: create the build users)"

// takeEval asks for a flake job and returns its assignment.
func (p *peer) takeEval() *wire.AssignJob {
	p.t.Helper()
	p.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	return assignOf(p.t, p.next())
}

func (p *peer) giveBack(a *wire.AssignJob, kind wire.BuildFailureKind, why string) {
	p.send(&wire.JobFailed{JobID: a.JobID, AssignmentID: a.AssignmentID, Kind: kind, Error: why})
}

// evalBack waits until an evaluation is queued again and returns how many attempts it used.
func (r *rig) evalBack(id string) int {
	r.t.Helper()
	var got store.Evaluation
	eventually(r.t, "evaluation "+id+" back in the queue", func() bool {
		var err error
		got, err = r.st.GetEvaluation(ctx, id)
		return err == nil && got.Status == store.EvalQueued
	})
	return got.Attempts
}

// TestSetupFailuresInARowQuarantineTheWorker (gradient-server §6.4): a job the worker gives
// back for its own set-up returns to the queue without an attempt; the third in a row
// quarantines the worker: Draining, the session closed, "quarantined: <reason>" as its
// offline reason. A new session lifts the quarantine.
func TestSetupFailuresInARowQuarantineTheWorker(t *testing.T) {
	r := newRig(t, Config{})
	evals := map[string]bool{}
	for range 4 {
		evals["eval:"+r.queueEvaluation().ID] = true
	}
	p := r.connect(workerA)
	for i := range quarantineAfter {
		a := p.takeEval()
		if !evals[a.JobID] {
			t.Fatalf("assigned %s", a.JobID)
		}
		p.giveBack(a, wire.BuildFailureKindCanceled, setupError)
		if i < quarantineAfter-1 {
			if n := r.evalBack(strings.TrimPrefix(a.JobID, "eval:")); n != 0 {
				t.Fatalf("a set-up failure used %d attempts of %s", n, a.JobID)
			}
		}
	}
	if _, ok := p.next().(*wire.ServerDraining); !ok {
		t.Fatal("the quarantined session was not drained")
	}
	if _, err := p.read(5 * time.Second); err == nil {
		t.Fatal("the quarantined session stayed open")
	}
	eventually(t, "the offline reason", func() bool {
		return r.offlineReason(workerA) == "quarantined: "+setupError
	})
	for id := range evals {
		if got, _ := r.st.GetEvaluation(ctx, strings.TrimPrefix(id, "eval:")); got.Attempts != 0 || got.Status != store.EvalQueued {
			t.Errorf("%s: %v after %d attempts; want Queued, none used", id, got.Status, got.Attempts)
		}
	}
	if s, q := r.srv.counters.SetupFailures.Load(), r.srv.counters.WorkersQuarantined.Load(); s != 3 || q != 1 {
		t.Errorf("counted %d set-up failures and %d quarantines, want 3 and 1", s, q)
	}

	again := r.reconnect(workerA)
	if a := again.takeEval(); !evals[a.JobID] {
		t.Fatalf("after reconnecting the worker was assigned %s", a.JobID)
	}
	if q := r.srv.LiveWorkers()[workerA].Quarantined; q != "" {
		t.Errorf("still quarantined after a new session: %q", q)
	}
}

// Only failures in a row count: a job that completes, or fails on its own merits, ends the
// run; Canceled reports of a draining worker are a stop, not a set-up failure.
func TestOnlySetupFailuresInARowCount(t *testing.T) {
	r := newRig(t, Config{})
	for range 8 {
		r.queueEvaluation()
	}
	p := r.connect(workerA)
	p.giveBack(p.takeEval(), wire.BuildFailureKindCanceled, setupError)
	p.giveBack(p.takeEval(), wire.BuildFailureKindCanceled, setupError)
	p.giveBack(p.takeEval(), wire.BuildFailureKindTransient, "fetch failed: the repository is gone")
	p.giveBack(p.takeEval(), wire.BuildFailureKindCanceled, setupError)
	p.giveBack(p.takeEval(), wire.BuildFailureKindCanceled, setupError)
	last := p.takeEval()
	p.send(&wire.ClientDraining{})
	p.giveBack(last, wire.BuildFailureKindCanceled, "worker is stopping")
	eventually(t, "every report applied", func() bool { return r.srv.counters.JobsFailed.Load() == 6 })
	if s, q := r.srv.counters.SetupFailures.Load(), r.srv.counters.WorkersQuarantined.Load(); s != 4 || q != 0 {
		t.Errorf("counted %d set-up failures and %d quarantines, want 4 and 0", s, q)
	}
	if r.srv.sessions.get(workerA) == nil {
		t.Error("the session ended")
	}
}

// A worker that reports what its Nix cannot do is shown quarantined with that reason, and a
// build that only it could take says so.
func TestAWorkerWithholdingBuildIsShownWithItsReason(t *testing.T) {
	r := newRig(t, Config{})
	h := http.Header{}
	health.Unavailable{health.Build: "nix cannot build: no build users"}.Set(h)
	r.connectWith(workerA, wire.GradientCapabilities{Fetch: true, Eval: true}, h)
	eventually(t, "the session", func() bool { return r.srv.sessions.get(workerA) != nil })
	if q := r.srv.LiveWorkers()[workerA].Quarantined; q != "build: nix cannot build: no build users" {
		t.Errorf("Quarantined = %q", q)
	}
	want := "no connected worker offers build for x86_64-linux (" + workerA + " is quarantined: nix cannot build: no build users)"
	if got := r.srv.WaitReason(r.project.ID, store.JobBuild, "x86_64-linux"); got != want {
		t.Errorf("WaitReason = %q\nwant %q", got, want)
	}
	if got := r.srv.WaitReason(r.project.ID, store.JobEval, ""); got != "a free slot on 1 worker(s) that offer eval" {
		t.Errorf("eval WaitReason = %q", got)
	}
}

// reconnect dials again as an already registered worker.
func (r *rig) reconnect(workerID string) *peer {
	r.t.Helper()
	return r.handshake(workerID, wire.GradientCapabilities{Fetch: true, Eval: true, Build: true}, nil)
}

// connectWith registers workerID and connects it offering caps, with header on the upgrade.
func (r *rig) connectWith(workerID string, caps wire.GradientCapabilities, header http.Header) *peer {
	r.t.Helper()
	r.register(workerID)
	return r.handshake(workerID, caps, header)
}
