package server

import (
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

const (
	goodDrv = "/nix/store/0iz84xy22rpj9d46qj6dz4sbicjazq3d-x.drv"
	goodOut = "/nix/store/1iz84xy22rpj9d46qj6dz4sbicjazq3d-x"
)

func derivation(drv string) wire.DiscoveredDerivation {
	return wire.DiscoveredDerivation{Attr: "packages.x", DrvPath: drv, Architecture: "x86_64-linux",
		Outputs: []wire.DerivationOutput{{Name: "out", Path: goodOut}}}
}

// gradient-server §6.1: a report that fails validation for one job fails that job
// (Transient: re-queued with an attempt counted), the worker gets AbortJob for it, and the
// same session keeps serving its other job. Later reports of the failed job are dropped as
// stale.
func TestAnInvalidReportCostsItsJobNotTheSession(t *testing.T) {
	cases := []struct {
		name    string
		report  func(job *wire.AssignJob) wire.ClientMessage
		aborted bool // the worker is still running the job, so it is told to stop
	}{
		{"EvalResult with a derivation that is not a store path", func(j *wire.AssignJob) wire.ClientMessage {
			return update(j, &wire.JobUpdateEvalResult{Derivations: []wire.DiscoveredDerivation{derivation("not-a-path.drv")}})
		}, true},
		{"EvalResult with a dependency outside the store", func(j *wire.AssignJob) wire.ClientMessage {
			d := derivation(goodDrv)
			d.Dependencies = []string{"/etc/passwd.drv"}
			return update(j, &wire.JobUpdateEvalResult{Derivations: []wire.DiscoveredDerivation{d}})
		}, true},
		{"a build update on a flake job", func(j *wire.AssignJob) wire.ClientMessage {
			return update(j, &wire.JobUpdateBuilding{BuildID: "b"})
		}, true},
		{"FetchResult naming a path outside the store", func(j *wire.AssignJob) wire.ClientMessage {
			return update(j, &wire.JobUpdateFetchResult{FlakeSource: wire.Some("/etc/passwd")})
		}, true},
		{"JobFailed with missing paths that are not store paths", func(j *wire.AssignJob) wire.ClientMessage {
			return &wire.JobFailed{JobID: j.JobID, AssignmentID: j.AssignmentID, Kind: wire.BuildFailureKindInputsUnavailable,
				MissingPaths: []string{"../../etc"}}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, Config{})
			evX, evY := r.queueEvaluation(), r.queueEvaluation()
			p := r.connect(workerA)
			p.send(&wire.RequestJob{Kind: wire.JobKindFlake})
			x := assignOf(t, p.next())
			p.send(&wire.RequestJob{Kind: wire.JobKindFlake})
			y := assignOf(t, p.next())
			if x.JobID != "eval:"+evX.ID || y.JobID != "eval:"+evY.ID {
				t.Fatalf("assigned %s then %s", x.JobID, y.JobID)
			}

			p.send(c.report(x))
			if c.aborted {
				abort, ok := p.next().(*wire.AbortJob)
				if !ok || abort.JobID != x.JobID || !strings.HasPrefix(abort.Reason, "invalid report") {
					t.Fatalf("got %+v, want AbortJob for %s", abort, x.JobID)
				}
			}
			eventually(t, "the invalid report to fail its job", func() bool {
				got, err := r.st.GetEvaluation(ctx, evX.ID)
				return err == nil && got.Attempts == 1 && got.Status == store.EvalQueued
			})
			if n := r.srv.counters.ReportsInvalid.Load(); n != 1 {
				t.Errorf("invalid reports counted %d, want 1", n)
			}

			// The session still serves Y, and X's later reports are stale.
			p.send(update(y, &wire.JobUpdateFetching{}))
			p.send(update(x, &wire.JobUpdateFetching{}))
			eventually(t, "Y's report to apply", func() bool {
				got, _ := r.st.GetEvaluation(ctx, evY.ID)
				return got.Status == store.EvalFetching
			})
			eventually(t, "X's later report to be dropped", func() bool { return r.srv.counters.ReportsStale.Load() == 1 })
			if got, _ := r.st.GetEvaluation(ctx, evX.ID); got.Status != store.EvalQueued {
				t.Errorf("X moved to %v after it failed", got.Status)
			}
			p.send(&wire.RequestJobList{})
			if m, ok := p.next().(*wire.JobListChunk); !ok {
				t.Fatalf("after the invalid report the session answered %T (a second AbortJob?)", m)
			}
			if r.srv.sessions.get(workerA) == nil {
				t.Fatal("the session ended")
			}
		})
	}
}

// A valid report of the same shapes applies (the checks refuse only what is wrong).
func TestAValidEvalResultApplies(t *testing.T) {
	r := newRig(t, Config{})
	ev := r.queueEvaluation()
	p := r.connect(workerA)
	p.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	x := assignOf(t, p.next())
	p.send(update(x, &wire.JobUpdateEvaluatingDerivations{}))
	p.send(update(x, &wire.JobUpdateEvalResult{Derivations: []wire.DiscoveredDerivation{derivation(goodDrv)}}))
	p.send(&wire.JobCompleted{JobID: x.JobID, AssignmentID: x.AssignmentID})
	eventually(t, "the evaluation to reach Building", func() bool {
		got, _ := r.st.GetEvaluation(ctx, ev.ID)
		return got.Status == store.EvalBuilding
	})
	if n := r.srv.counters.ReportsInvalid.Load(); n != 0 {
		t.Errorf("%d valid reports counted invalid", n)
	}
	// The build it queued runs on the same session; a BuildOutput naming another build fails
	// only that build job.
	p.send(&wire.WorkerCapabilities{Architectures: []string{"x86_64-linux"}, MaxConcurrentBuilds: 1})
	p.send(&wire.RequestJob{Kind: wire.JobKindBuild})
	b := assignOf(t, p.next())
	p.send(update(b, &wire.JobUpdateBuilding{BuildID: strings.TrimPrefix(b.JobID, "build:")}))
	p.send(update(b, &wire.JobUpdateBuildOutput{BuildID: "another-build"}))
	if abort, ok := p.next().(*wire.AbortJob); !ok || abort.JobID != b.JobID {
		t.Fatalf("got %+v, want AbortJob for %s", abort, b.JobID)
	}
	eventually(t, "the build to be failed transiently", func() bool {
		d, err := r.st.GetBuild(ctx, strings.TrimPrefix(b.JobID, "build:"))
		return err == nil && d.Status == store.BuildFailedTransient
	})
}

func update(j *wire.AssignJob, u wire.JobUpdateKind) *wire.JobUpdate {
	return &wire.JobUpdate{JobID: j.JobID, AssignmentID: j.AssignmentID, Update: u}
}

// checkUpdate's table: what each update kind must hold.
func TestCheckUpdate(t *testing.T) {
	evalJob, buildJob := store.EvalJob("e"), store.BuildJob("b")
	selfDep := derivation(goodDrv)
	selfDep.Dependencies = []string{goodDrv}
	floating := derivation(goodDrv)
	floating.Outputs = []wire.DerivationOutput{{Name: "out"}}
	cases := []struct {
		name string
		job  store.JobRef
		u    wire.JobUpdateKind
		ok   bool
	}{
		{"fetching on an eval job", evalJob, &wire.JobUpdateFetching{}, true},
		{"fetching on a build job", buildJob, &wire.JobUpdateFetching{}, false},
		{"stage on an eval job", evalJob, &wire.JobUpdateStage{}, false},
		{"good eval result", evalJob, &wire.JobUpdateEvalResult{Derivations: []wire.DiscoveredDerivation{derivation(goodDrv)}}, true},
		{"floating CA output", evalJob, &wire.JobUpdateEvalResult{Derivations: []wire.DiscoveredDerivation{floating}}, true},
		{"drv path without .drv", evalJob, &wire.JobUpdateEvalResult{Derivations: []wire.DiscoveredDerivation{derivation(goodOut)}}, false},
		{"self dependency", evalJob, &wire.JobUpdateEvalResult{Derivations: []wire.DiscoveredDerivation{selfDep}}, false},
		{"path with a slash after the name", evalJob, &wire.JobUpdateFetchResult{FlakeSource: wire.Some(goodOut + "/sub")}, false},
		{"path in another store dir", evalJob, &wire.JobUpdateFetchResult{FlakeSource: wire.Some("/gnu/store/0iz84xy22rpj9d46qj6dz4sbicjazq3d-x")}, false},
		{"hash outside nix32", evalJob, &wire.JobUpdateFetchResult{FlakeSource: wire.Some("/nix/store/eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee-x")}, false},
		{"no flake source", evalJob, &wire.JobUpdateFetchResult{}, true},
		{"building its own build", buildJob, &wire.JobUpdateBuilding{BuildID: "b"}, true},
		{"building another build", buildJob, &wire.JobUpdateBuilding{BuildID: "c"}, false},
		{"good build output", buildJob, &wire.JobUpdateBuildOutput{BuildID: "b", Outputs: []wire.BuildOutput{{Name: "out", StorePath: goodOut}}}, true},
		{"unnamed build output", buildJob, &wire.JobUpdateBuildOutput{BuildID: "b", Outputs: []wire.BuildOutput{{StorePath: goodOut}}}, false},
		{"input update (not applied)", buildJob, &wire.JobUpdateInputUpdateExpansion{}, true},
	}
	for _, c := range cases {
		err := checkUpdate(c.job, c.u)
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

func TestTruncateReasonBoundsWorkerText(t *testing.T) {
	long := strings.Repeat("é", maxReasonBytes)
	got := truncateReason(long)
	if len(got) > maxReasonBytes+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("truncated to %d bytes: %q...", len(got), got[:16])
	}
	if truncateReason("short") != "short" {
		t.Error("a short reason changed")
	}
}

// gradient-protocol §1.4: a frame that does not decode is the one bad frame that
// ends the session, with Error 400 "malformed message" first; the assignment it held is
// abandoned.
func TestAnUndecodableFrameEndsTheSessionWith400(t *testing.T) {
	r := newRig(t, Config{})
	r.queueEvaluation()
	token := r.register(workerA)
	ws, _, err := websocket.Dial(ctx, r.url, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		t.Fatal(err)
	}
	c := wsconn.NewWorkerConn(ws, wsconn.Options{})
	t.Cleanup(func() { c.Abort() })
	role, out := session.NewPeer(session.PeerConfig{WorkerID: workerA,
		Tokens:       session.NewPeerTokens([]wire.PeerToken{{PeerID: r.project.ID, Token: token}}),
		Capabilities: wire.GradientCapabilities{Fetch: true, Eval: true, Build: true}})
	if _, _, err := handshake.Run(ctx, c, role, out, nil); err != nil {
		t.Fatal(err)
	}
	p := &peer{t: t, c: c}
	p.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	job := assignOf(t, p.next())

	if err := ws.Write(ctx, websocket.MessageBinary, []byte{0xff, 0xff, 0x01}); err != nil {
		t.Fatal(err)
	}
	m, ok := p.next().(*wire.ServerError)
	if !ok || m.Code != 400 || m.Message != "malformed message" {
		t.Fatalf("got %+v, want Error 400 malformed message", m)
	}
	if _, err := p.read(5 * time.Second); err == nil {
		t.Fatal("the session stayed open after an undecodable frame")
	}
	eventually(t, "the session to end", func() bool { return r.srv.sessions.get(workerA) == nil })
	if n := r.srv.counters.FramesMalformed.Load(); n != 1 {
		t.Errorf("malformed frames counted %d", n)
	}
	b := r.connect(workerB)
	b.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	if again := assignOf(t, b.next()); again.JobID != job.JobID {
		t.Errorf("the abandoned job %s was not offered again (got %s)", job.JobID, again.JobID)
	}
}
