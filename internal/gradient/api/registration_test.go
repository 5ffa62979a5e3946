package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

func projectPeer(ref string) apiclient.Peer {
	return apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: ref}
}
func cachePeer(ref string) apiclient.Peer { return apiclient.Peer{Kind: apiclient.CachePeer, Ref: ref} }

func TestRegisterStoresOnlyTheArgon2idHashAndShowsTheTokenOnce(t *testing.T) {
	h := newHarness(t)
	p := got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	// An uppercase ID is stored in the canonical form the worker sends.
	resp := got(h.admin.RegisterWorker(h.ctx, projectPeer("proj"),
		api.RegisterWorkerRequest{WorkerID: strings.ToUpper(workerA), DisplayName: "builder 1"})).must(t)
	h.remember(resp.Token)
	reg := resp.Registration
	if reg.WorkerID != workerA || reg.PeerID != p.ID || reg.PeerKind != "project" || reg.PeerName != "proj" ||
		!reg.Active || !reg.EnableFetch || !reg.EnableEval || !reg.EnableBuild || reg.DisplayName != "builder 1" {
		t.Fatalf("registration %+v", reg)
	}
	if resp.PeersFileLine != p.ID+":"+resp.Token {
		t.Errorf("peers file line %q, want peer_id:token", resp.PeersFileLine)
	}
	if len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "no cache") {
		t.Errorf("warnings %v, want the missing cache", resp.Warnings)
	}

	id := got(h.store.WorkerIdentity(h.ctx, workerA)).must(t)
	stored := id.TokenHashes[p.ID]
	if !strings.HasPrefix(stored, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("stored hash %q is not an argon2id PHC string", stored)
	}
	if strings.Contains(stored, resp.Token) {
		t.Fatal("the stored hash contains the token")
	}
	if !peertoken.Verify(stored, resp.Token) || peertoken.Verify(stored, resp.Token+"x") {
		t.Fatal("the stored hash does not verify exactly the returned token")
	}

	// Nothing afterwards returns the token again.
	for _, path := range []string{"/api/v1/registrations", "/api/v1/registrations?worker=" + workerA,
		"/api/v1/workers", "/api/v1/workers/" + workerA, "/api/v1/projects/proj"} {
		a := h.raw("GET", path, h.adminKey, "")
		if a.status != http.StatusOK || strings.Contains(string(a.body), resp.Token) || strings.Contains(string(a.body), "argon2") {
			t.Errorf("GET %s (%d) shows the token or its hash", path, a.status)
		}
	}
}

func TestRegistrationOptionsAndRefusals(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	c := got(h.admin.CreateCache(h.ctx, api.CreateCacheRequest{Name: "c"})).must(t)
	no := false
	resp := got(h.admin.RegisterWorker(h.ctx, cachePeer("c"),
		api.RegisterWorkerRequest{WorkerID: workerB, EnableBuild: &no})).must(t)
	h.remember(resp.Token)
	if r := resp.Registration; r.PeerKind != "cache" || r.PeerID != c.ID || !r.EnableFetch || !r.EnableEval || r.EnableBuild {
		t.Errorf("cache registration %+v, want build disabled and the rest enabled", r)
	}
	if len(resp.Warnings) != 0 {
		t.Errorf("a cache registration warns %v", resp.Warnings)
	}

	team := got(h.store.CreateTeam(h.ctx, "team")).must(t)
	const teamWorker = "0190c000-0000-7000-8000-00000000000c"
	got(h.store.CreateTeamWorker(h.ctx, store.NewTeamWorker{TeamID: team.ID, WorkerID: teamWorker, TokenHash: peertoken.SHA256Hex("t"), Enabled: true})).must(t)

	body := func(worker string) string { return `{"worker_id":"` + worker + `"}` }
	h.expectRefusal("POST", "/api/v1/caches/c/registrations", body(workerB), 409, api.CodeConflict)
	h.expectRefusal("POST", "/api/v1/projects/proj/registrations", body(teamWorker), 409, api.CodeWorkerIDTaken)
	h.expectRefusal("POST", "/api/v1/projects/proj/registrations", body("worker-1"), 400, api.CodeBadRequest)
	h.expectRefusal("POST", "/api/v1/projects/proj/registrations", `{"worker_id":"`+workerA+`","enable_eval":"yes"}`, 400, api.CodeBadRequest)
	h.expectRefusal("POST", "/api/v1/projects/nope/registrations", body(workerA), 404, api.CodeNotFound)
	h.expectRefusal("POST", "/api/v1/projects/proj/registrations", `{"worker_id":"`+workerA+`","url":"http://w:1"}`, 400, api.CodeBadRequest)
	// No dial-token key on this server: a server-dialed registration cannot be stored.
	h.expectRefusal("POST", "/api/v1/projects/proj/registrations", `{"worker_id":"`+workerA+`","url":"wss://worker.example:8443/proto"}`, 501, api.CodeNotImplemented)
	if regs := got(h.admin.Registrations(h.ctx, workerA)).must(t); len(regs) != 0 {
		t.Errorf("refused registrations were stored: %+v", regs)
	}
}

func TestServerDialedRegistrationSealsTheToken(t *testing.T) {
	var sealed []string
	h := newHarness(t, func(c *api.Config) {
		c.SealDialToken = func(token string) ([]byte, error) {
			sealed = append(sealed, token)
			return []byte("sealed"), nil
		}
	})
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	resp := got(h.admin.RegisterWorker(h.ctx, projectPeer("proj"),
		api.RegisterWorkerRequest{WorkerID: workerA, URL: "wss://worker.example:8443/proto"})).must(t)
	h.remember(resp.Token)
	if !resp.Registration.HasDialToken || resp.Registration.URL != "wss://worker.example:8443/proto" {
		t.Errorf("registration %+v, want a dial token and the url", resp.Registration)
	}
	if len(sealed) != 1 || sealed[0] != resp.Token {
		t.Error("the sealed token is not the one returned")
	}
}

func TestDeactivateAndReactivate(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	h.remember(got(h.admin.RegisterWorker(h.ctx, projectPeer("proj"), api.RegisterWorkerRequest{WorkerID: workerA})).must(t).Token)

	reg := got(h.admin.SetRegistrationActive(h.ctx, projectPeer("proj"), workerA, false)).must(t)
	if reg.Active {
		t.Fatal("deactivation answered an active registration")
	}
	facts := got(h.store.WorkerIdentity(h.ctx, workerA)).must(t).Facts
	if len(facts.Registrations) != 1 || facts.Registrations[0].Active {
		t.Fatalf("store facts after deactivation: %+v", facts)
	}
	if reg := got(h.admin.SetRegistrationActive(h.ctx, projectPeer("proj"), workerA, true)).must(t); !reg.Active {
		t.Fatal("reactivation answered an inactive registration")
	}
	h.expectRefusal("PATCH", "/api/v1/projects/proj/registrations/"+workerA, `{}`, 400, api.CodeBadRequest)
	h.expectRefusal("PATCH", "/api/v1/projects/proj/registrations/"+workerB, `{"active":false}`, 404, api.CodeNotFound)
	h.expectRefusal("PATCH", "/api/v1/projects/proj/registrations/nope", `{"active":false}`, 400, api.CodeBadRequest)
	h.expectRefusal("PATCH", "/api/v1/caches/proj/registrations/"+workerA, `{"active":false}`, 404, api.CodeNotFound)
	_, _, changed := h.live.snapshot()
	if len(changed) != 3 {
		t.Errorf("registration watcher heard %d changes, want 3 (register, deactivate, reactivate)", len(changed))
	}
}

func TestWorkersAreLiveOrOfflineWithTheirReason(t *testing.T) {
	h := newHarness(t)
	p := got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	for _, w := range []string{workerA, workerB} {
		h.remember(got(h.admin.RegisterWorker(h.ctx, projectPeer("proj"), api.RegisterWorkerRequest{WorkerID: w, DisplayName: "w"})).must(t).Token)
	}
	seen := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := h.store.MarkWorkerConnected(h.ctx, workerB, seen); err != nil {
		t.Fatal(err)
	}
	if err := h.store.SetWorkerCapabilities(h.ctx, workerB, []byte(`{"systems":["x86_64-linux"]}`)); err != nil {
		t.Fatal(err)
	}
	if err := h.store.MarkWorkerOffline(h.ctx, workerB, "no valid peer tokens provided"); err != nil {
		t.Fatal(err)
	}
	connected := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	h.live.setWorker(workerA, api.LiveWorker{ConnectedAt: connected, Authorized: []string{p.ID},
		Capabilities: wire.GradientCapabilities{Core: true, Build: true}})

	workers := got(h.admin.Workers(h.ctx)).must(t)
	if len(workers) != 2 || workers[0].WorkerID != workerA || workers[1].WorkerID != workerB {
		t.Fatalf("workers %+v", workers)
	}
	a, b := workers[0], workers[1]
	if a.Status != api.WorkerLive || !a.ConnectedAt.Equal(connected) || a.Capabilities == nil || !a.Capabilities.Build ||
		a.Capabilities.Eval || len(a.AuthorizedPeers) != 1 || a.OfflineReason != "" {
		t.Errorf("live worker %+v", a)
	}
	if b.Status != api.WorkerOffline || b.OfflineReason != "no valid peer tokens provided" || b.Capabilities != nil ||
		!b.LastSeenAt.Equal(seen) || !json.Valid(b.ReportedCapabilities) {
		t.Errorf("offline worker %+v", b)
	}
	shown := got(h.admin.Worker(h.ctx, workerB)).must(t)
	if len(shown.Registrations) != 1 || shown.Registrations[0].PeerName != "proj" {
		t.Errorf("worker show %+v", shown)
	}
	h.expectRefusal("GET", "/api/v1/workers/0190d000-0000-7000-8000-00000000000d", "", 404, api.CodeNotFound)
	h.expectRefusal("GET", "/api/v1/workers/not-a-uuid", "", 400, api.CodeBadRequest)
}
