package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
)

// gradient-protocol §4.2: a team worker is registered once on a team; its token is shown
// once, only its hash is stored, and its peers file line names the team, which is what the
// challenge names.
func TestRegisterTeamWorkerShowsTheTokenOnceUnderTheTeamID(t *testing.T) {
	h := newHarness(t)
	team := got(h.admin.CreateTeam(h.ctx, "ops")).must(t)
	resp := got(h.admin.RegisterTeamWorker(h.ctx, "ops", api.RegisterTeamWorkerRequest{WorkerID: strings.ToUpper(workerA)})).must(t)
	h.remember(resp.Token)
	if resp.TeamWorker.WorkerID != workerA || resp.TeamWorker.TeamID != team.ID || !resp.TeamWorker.Enabled {
		t.Fatalf("team worker %+v", resp.TeamWorker)
	}
	if resp.PeersFileLine != team.ID+":"+resp.Token {
		t.Errorf("peers file line %q, want team_id:token", resp.PeersFileLine)
	}
	if len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "no project grants") {
		t.Errorf("warnings %v, want the missing grant", resp.Warnings)
	}
	id := got(h.store.WorkerIdentity(h.ctx, workerA)).must(t)
	if id.Facts.Team == nil || id.Facts.Team.TeamID != team.ID {
		t.Fatalf("identity %+v is not the team worker", id.Facts)
	}
	stored := id.TokenHashes[team.ID]
	if !strings.HasPrefix(stored, "$argon2id$") || !peertoken.Verify(stored, resp.Token) {
		t.Fatal("the stored hash is not an argon2id hash of the returned token")
	}
	for _, path := range []string{"/api/v1/teams", "/api/v1/teams/ops", "/api/v1/teams/" + team.ID} {
		a := h.raw("GET", path, h.adminKey, "")
		if a.status != http.StatusOK || strings.Contains(string(a.body), resp.Token) || strings.Contains(string(a.body), "argon2") {
			t.Errorf("GET %s (%d) shows the token or its hash", path, a.status)
		}
	}
	if _, _, changed := h.live.snapshot(); !slices.Equal(changed, []string{workerA}) {
		t.Errorf("registration watcher heard %v", changed)
	}
}

// gradient-protocol §4.2: a worker ID belongs to registrations or to one team worker, never
// both.
func TestAWorkerIDIsARegistrationsOrATeamWorkersNeverBoth(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	got(h.admin.CreateTeam(h.ctx, "ops")).must(t)
	r := got(h.admin.RegisterWorker(h.ctx, projectPeer("proj"), api.RegisterWorkerRequest{WorkerID: workerA})).must(t)
	h.remember(r.Token)
	h.expectRefusal("POST", "/api/v1/teams/ops/workers", `{"worker_id":"`+workerA+`"}`, http.StatusConflict, api.CodeWorkerIDTaken)
	tw := got(h.admin.RegisterTeamWorker(h.ctx, "ops", api.RegisterTeamWorkerRequest{WorkerID: workerB})).must(t)
	h.remember(tw.Token)
	h.expectRefusal("POST", "/api/v1/projects/proj/registrations", `{"worker_id":"`+workerB+`"}`, http.StatusConflict, api.CodeWorkerIDTaken)
	h.expectRefusal("POST", "/api/v1/teams/ops/workers", `{"worker_id":"`+workerB+`"}`, http.StatusConflict, api.CodeConflict)
}

// Granting a team tells the watcher about every worker of the team, so connected ones
// reauthenticate; the team then lists the project.
func TestGrantingATeamNotifiesItsWorkers(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	got(h.admin.CreateTeam(h.ctx, "ops")).must(t)
	for _, id := range []string{workerA, workerB} {
		h.remember(got(h.admin.RegisterTeamWorker(h.ctx, "ops", api.RegisterTeamWorkerRequest{WorkerID: id})).must(t).Token)
	}
	if err := h.admin.GrantTeam(h.ctx, "proj", "ops"); err != nil {
		t.Fatal(err)
	}
	if _, _, changed := h.live.snapshot(); !slices.Equal(changed, []string{workerA, workerB, workerA, workerB}) {
		t.Errorf("registration watcher heard %v, want each worker on register and on grant", changed)
	}
	team := got(h.admin.Team(h.ctx, "ops")).must(t)
	if !slices.Equal(team.Projects, []string{"proj"}) || len(team.Workers) != 2 {
		t.Fatalf("team %+v", team)
	}
	if err := h.admin.RevokeTeam(h.ctx, "proj", "ops"); err != nil {
		t.Fatal(err)
	}
	if team := got(h.admin.Team(h.ctx, "ops")).must(t); len(team.Projects) != 0 {
		t.Fatalf("after the revoke the team lists %v", team.Projects)
	}
	h.expectRefusal("DELETE", "/api/v1/projects/proj/teams/ops", "", http.StatusNotFound, api.CodeNotFound)
	h.expectRefusal("PUT", "/api/v1/projects/proj/teams/nope", "", http.StatusNotFound, api.CodeNotFound)
}

// Disabling a team worker is a registration change (its session ends with 403), and only a
// worker of that team can be disabled through it.
func TestDisablingATeamWorker(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateTeam(h.ctx, "ops")).must(t)
	got(h.admin.CreateTeam(h.ctx, "other")).must(t)
	h.remember(got(h.admin.RegisterTeamWorker(h.ctx, "ops", api.RegisterTeamWorkerRequest{WorkerID: workerA})).must(t).Token)
	off := got(h.admin.SetTeamWorkerEnabled(h.ctx, "ops", workerA, false)).must(t)
	if off.Enabled {
		t.Fatalf("%+v", off)
	}
	if id := got(h.store.WorkerIdentity(h.ctx, workerA)).must(t); id.Facts.Team.Enabled {
		t.Fatal("the store still has the team worker enabled")
	}
	if _, _, changed := h.live.snapshot(); !slices.Equal(changed, []string{workerA, workerA}) {
		t.Errorf("registration watcher heard %v", changed)
	}
	h.expectRefusal("PATCH", "/api/v1/teams/other/workers/"+workerA, `{"active":false}`, http.StatusNotFound, api.CodeNotFound)
	h.expectRefusal("PATCH", "/api/v1/teams/ops/workers/"+workerA, `{}`, http.StatusBadRequest, api.CodeBadRequest)
}

// gradient-protocol §4.3: a project's worker list shows a worker live only when its session
// authenticated for that project; registered workers and the granted team's workers are
// listed.
func TestAProjectsWorkerListIsLiveOnlyForItsOwnAuthentication(t *testing.T) {
	h := newHarness(t)
	a := got(h.admin.CreateProject(h.ctx, projectReq("a"))).must(t)
	b := got(h.admin.CreateProject(h.ctx, projectReq("b"))).must(t)
	h.remember(got(h.admin.RegisterWorker(h.ctx, projectPeer("a"), api.RegisterWorkerRequest{WorkerID: workerA})).must(t).Token)
	h.remember(got(h.admin.RegisterWorker(h.ctx, projectPeer("b"), api.RegisterWorkerRequest{WorkerID: workerA})).must(t).Token)
	got(h.admin.CreateTeam(h.ctx, "ops")).must(t)
	h.remember(got(h.admin.RegisterTeamWorker(h.ctx, "ops", api.RegisterTeamWorkerRequest{WorkerID: workerB})).must(t).Token)
	if err := h.admin.GrantTeam(h.ctx, "b", "ops"); err != nil {
		t.Fatal(err)
	}
	// workerA's session authenticated for a only (b's token failed); workerB for b.
	h.live.setWorker(workerA, api.LiveWorker{Authorized: []string{a.ID}, Remote: "192.0.2.1:40000"})
	h.live.setWorker(workerB, api.LiveWorker{Authorized: []string{b.ID}})

	status := func(project string) map[string]api.Worker {
		out := map[string]api.Worker{}
		for _, w := range got(h.admin.ProjectWorkers(h.ctx, project)).must(t) {
			out[w.WorkerID] = w
		}
		return out
	}
	inA, inB := status("a"), status("b")
	if len(inA) != 1 || inA[workerA].Status != api.WorkerLive || inA[workerA].Remote != "192.0.2.1:40000" {
		t.Fatalf("project a lists %+v", inA)
	}
	if len(inB) != 2 || inB[workerA].Status != api.WorkerOffline || inB[workerA].OfflineReason == "" ||
		inB[workerB].Status != api.WorkerLive {
		t.Fatalf("project b lists %+v", inB)
	}
}
