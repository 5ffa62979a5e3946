package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
)

// These run gradient-server and gradient-worker as real processes over real Nix, for the
// reauth and team-worker cases (gradient-protocol §4.2, gradient-protocol §4.3).
// "Same connection" is asserted three ways: the server reports the session's remote ip:port
// and connect time unchanged, and the worker logged exactly one running session.

// liveFor is the worker as a project's worker list shows it once it is live for that
// project (its session authenticated for it).
func (f *fleet) liveFor(t *testing.T, project, workerID string, within time.Duration) api.Worker {
	t.Helper()
	var found api.Worker
	waitFor(t, "worker "+workerID+" to be live for "+project, within, func() (bool, string) {
		ws, err := f.api.ProjectWorkers(bg, project)
		if err != nil {
			return false, err.Error()
		}
		for _, w := range ws {
			if w.WorkerID == workerID {
				found = w
				return w.Status == api.WorkerLive, w.Status + " " + w.OfflineReason
			}
		}
		return false, "not listed"
	})
	return found
}

// newProject adds a project on the fleet's flake, subscribed to the fleet's cache.
func (f *fleet) newProject(t *testing.T, name string) api.Project {
	t.Helper()
	p, err := f.api.CreateProject(bg, api.CreateProjectRequest{Name: name, RepoURL: f.flake.URL, Branch: "main",
		Wildcards: []string{"packages." + f.flake.System + ".*"}})
	if err == nil {
		err = f.api.Subscribe(bg, p.ID, f.cache.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// evaluateIn starts an evaluation of the flake's commit in a project.
func (f *fleet) evaluateIn(t *testing.T, projectID string, wildcards ...string) string {
	t.Helper()
	ev, err := f.api.StartEvaluation(bg, projectID, api.StartEvaluationRequest{Commit: f.flake.Commit, Wildcards: wildcards})
	if err != nil {
		t.Fatal(err)
	}
	return ev.ID
}

// sameSession checks that the worker's session is the one seen before: the same TCP
// connection (remote ip:port), the same connect time, and one session in the worker's log.
func sameSession(t *testing.T, before, after api.Worker, worker *proc) {
	t.Helper()
	if after.Remote == "" || after.Remote != before.Remote || !after.ConnectedAt.Equal(before.ConnectedAt) {
		t.Errorf("session changed: before %s at %s, after %s at %s", before.Remote, before.ConnectedAt, after.Remote, after.ConnectedAt)
	}
	if n := len(regexp.MustCompile(`worker: session running`).FindAllString(worker.log.String(), -1)); n != 1 {
		t.Errorf("the worker logged %d sessions, want 1:\n%s", n, worker.log)
	}
}

// TestReauthAddsAProjectWithoutReconnecting: a running worker is registered for a second
// project; the server's challenge finds no token for it yet, then the worker's peers file
// gains the line, the worker asks for a reauth, and the second project's evaluation and
// builds complete on the same connection.
func TestReauthAddsAProjectWithoutReconnecting(t *testing.T) {
	f := newFleet(t)
	worker := f.startWorker()
	before := f.liveFor(t, f.project.ID, f.workerID, time.Minute)

	second := f.newProject(t, "second")
	reg, err := f.api.RegisterWorker(bg, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: second.ID},
		api.RegisterWorkerRequest{WorkerID: f.workerID})
	if err != nil {
		t.Fatal(err)
	}
	// The registration's challenge round ran with the old peers file: still not live for it.
	worker.waitLog(`worker: reauthorized`, time.Minute)
	if ws, err := f.api.ProjectWorkers(bg, second.ID); err != nil || len(ws) != 1 || ws[0].Status == api.WorkerLive {
		t.Fatalf("before the peers file has the token, project workers %+v (%v)", ws, err)
	}

	peers := filepath.Join(f.baseDir, "peers")
	if err := os.WriteFile(peers, []byte(f.peersLine+"\n"+reg.PeersFileLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.liveFor(t, second.ID, f.workerID, time.Minute)

	d := f.completed(t, f.evaluateIn(t, second.ID), 5*time.Minute)
	if len(d.Builds) != 3 {
		t.Fatalf("second project's evaluation: %s", summary(d))
	}
	for _, b := range d.Builds {
		if b.Status != "Completed" {
			t.Fatalf("second project's build: %s", summary(d))
		}
	}
	sameSession(t, before, f.liveFor(t, second.ID, f.workerID, time.Minute), worker)
	worker.stop()
}

// TestATeamWorkerServesTwoProjects: a team worker connects while one project grants its
// team; a second project grants the team later and its evaluation and builds run on the
// running session (the challenge names the team; the peers file never changes).
func TestATeamWorkerServesTwoProjects(t *testing.T) {
	f := newFleet(t) // its registered worker is never started: the team worker does all the work
	if _, err := f.api.CreateTeam(bg, "ops"); err != nil {
		t.Fatal(err)
	}
	teamWorker := newWorkerID(t)
	reg, err := f.api.RegisterTeamWorker(bg, "ops", api.RegisterTeamWorkerRequest{WorkerID: teamWorker})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.api.GrantTeam(bg, f.project.ID, "ops"); err != nil {
		t.Fatal(err)
	}
	worker := startWorker(t, f.srv, teamWorker, t.TempDir(), reg.PeersFileLine)
	before := f.liveFor(t, f.project.ID, teamWorker, time.Minute)

	sys := f.flake.System
	f.completed(t, f.evaluateIn(t, f.project.ID, "packages."+sys+".a"), 5*time.Minute) // the first project's

	later := f.newProject(t, "later")
	if ws, err := f.api.ProjectWorkers(bg, later.ID); err != nil || len(ws) != 0 {
		t.Fatalf("before the grant, project workers %+v (%v)", ws, err)
	}
	if err := f.api.GrantTeam(bg, later.ID, "ops"); err != nil {
		t.Fatal(err)
	}
	f.liveFor(t, later.ID, teamWorker, time.Minute)
	d := f.completed(t, f.evaluateIn(t, later.ID), 5*time.Minute)
	if len(d.Builds) != 3 {
		t.Fatalf("later project's evaluation: %s", summary(d))
	}
	for _, name := range []string{"b", "c"} { // a was built for the first project
		if b := buildNamed(t, d, name); b.Status != "Completed" {
			t.Fatalf("build %s of the later project: %s", name, summary(d))
		}
	}
	sameSession(t, before, f.liveFor(t, later.ID, teamWorker, time.Minute), worker)
	worker.stop()
}
