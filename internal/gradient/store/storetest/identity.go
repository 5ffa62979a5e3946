package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/go-cmp/cmp"
)

var identityTests = []test{
	{"UnknownWorkerHasNoFacts/4.4", func(t *testing.T, e *env) {
		id := must(e.s.WorkerIdentity(e.ctx, workerA))
		if id.Facts.Registered() || len(id.TokenHashes) != 0 {
			t.Errorf("unknown worker: %+v", id)
		}
	}},
	{"RegistrationsMapOntoSessionFacts/4.4", func(t *testing.T, e *env) {
		bare := e.newProject("no-cache")
		reg := func(peer, hash string, url string, tok []byte, fetch bool) {
			must(e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: peer, WorkerID: workerA, TokenHash: hash,
				URL: url, TokenEnc: tok, EnableFetch: fetch, EnableEval: true, EnableBuild: true}))
			e.clock.Advance(time.Second) // registration order is creation order
		}
		reg(e.project.ID, "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA", "wss://w", []byte("enc"), true)
		reg(bare.ID, "ab12", "", nil, false)
		reg(e.cache.ID, "cd34", "", nil, false)
		check(t, e.s.SetRegistrationActive(e.ctx, bare.ID, workerA, false))
		got := must(e.s.WorkerIdentity(e.ctx, workerA))
		want := store.WorkerIdentity{
			Facts: session.WorkerFacts{Registrations: []session.Registration{
				{PeerID: e.project.ID, Kind: session.PeerProject, Active: true, EnableFetch: true, EnableEval: true,
					EnableBuild: true, HasCache: true, HasDialToken: true},
				{PeerID: bare.ID, Kind: session.PeerProject, Active: false, EnableEval: true, EnableBuild: true},
				{PeerID: e.cache.ID, Kind: session.PeerCache, Active: true, EnableEval: true, EnableBuild: true},
			}},
			TokenHashes: map[string]string{e.project.ID: "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA",
				bare.ID: "ab12", e.cache.ID: "cd34"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("WorkerIdentity (-want +got):\n%s", diff)
		}
		if ch := got.Facts.Challenge(); !cmp.Equal(ch, []string{e.project.ID, e.cache.ID}) {
			t.Errorf("challenge %v names the inactive registration or misses an active one", ch)
		}
	}},
	{"TeamWorkerCarriesGrantingProjects/4.2", func(t *testing.T, e *env) {
		team := must(e.s.CreateTeam(e.ctx, "ops"))
		bare := e.newProject("no-cache")
		denied := e.newProject("denied")
		check(t, e.s.SetTeamGrant(e.ctx, store.TeamGrant{TeamID: team.ID, ProjectID: e.project.ID, Workers: true}))
		check(t, e.s.SetTeamGrant(e.ctx, store.TeamGrant{TeamID: team.ID, ProjectID: bare.ID, Workers: true}))
		check(t, e.s.SetTeamGrant(e.ctx, store.TeamGrant{TeamID: team.ID, ProjectID: denied.ID, Workers: false}))
		must(e.s.CreateTeamWorker(e.ctx, store.NewTeamWorker{TeamID: team.ID, WorkerID: workerB, TokenHash: "tt", Enabled: true}))
		got := must(e.s.WorkerIdentity(e.ctx, workerB))
		grants := []session.Grant{{ProjectID: e.project.ID, HasCache: true}, {ProjectID: bare.ID}}
		if e.project.ID > bare.ID {
			grants[0], grants[1] = grants[1], grants[0]
		}
		want := store.WorkerIdentity{
			Facts:       session.WorkerFacts{Team: &session.TeamWorker{TeamID: team.ID, Enabled: true, Grants: grants}},
			TokenHashes: map[string]string{team.ID: "tt"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("WorkerIdentity (-want +got):\n%s", diff)
		}
		check(t, e.s.SetTeamGrant(e.ctx, store.TeamGrant{TeamID: team.ID, ProjectID: bare.ID, Workers: false}))
		check(t, e.s.SetTeamWorkerEnabled(e.ctx, workerB, false))
		got = must(e.s.WorkerIdentity(e.ctx, workerB))
		if got.Facts.Team.Enabled || len(got.Facts.Team.Grants) != 1 {
			t.Errorf("after revoking a grant and disabling: %+v", got.Facts.Team)
		}
	}},
	{"DialTargetsGroupTokensByWorkerURL/4.1", func(t *testing.T, e *env) {
		other := e.newProject("other")
		team := must(e.s.CreateTeam(e.ctx, "ops"))
		must(e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: e.project.ID, WorkerID: workerA, TokenHash: "h",
			URL: "wss://a", TokenEnc: []byte("t1")}))
		e.clock.Advance(time.Second)
		must(e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: other.ID, WorkerID: workerA, TokenHash: "h",
			URL: "wss://a", TokenEnc: []byte("t2")}))
		must(e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: e.cache.ID, WorkerID: workerA, TokenHash: "h"}))
		must(e.s.CreateTeamWorker(e.ctx, store.NewTeamWorker{TeamID: team.ID, WorkerID: workerB, TokenHash: "h",
			URL: "wss://b", TokenEnc: []byte("t3"), Enabled: true}))
		want := []store.DialTarget{
			{WorkerID: workerA, URL: "wss://a", Tokens: []store.DialToken{{PeerID: e.project.ID, TokenEnc: []byte("t1")},
				{PeerID: other.ID, TokenEnc: []byte("t2")}}},
			{WorkerID: workerB, URL: "wss://b", Tokens: []store.DialToken{{PeerID: team.ID, TokenEnc: []byte("t3")}}},
		}
		if diff := cmp.Diff(want, must(e.s.DialTargets(e.ctx))); diff != "" {
			t.Errorf("DialTargets (-want +got):\n%s", diff)
		}
		check(t, e.s.SetRegistrationActive(e.ctx, other.ID, workerA, false))
		if got := must(e.s.DialTargets(e.ctx)); len(got[0].Tokens) != 1 {
			t.Errorf("an inactive registration's token is still dialed: %+v", got[0])
		}
	}},
	{"WorkerBookkeeping/9", func(t *testing.T, e *env) {
		must(e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: e.project.ID, WorkerID: workerA, TokenHash: "h",
			DisplayName: "builder-1"}))
		at := e.clock.Now()
		check(t, e.s.MarkWorkerOffline(e.ctx, workerA, "no valid peer tokens provided"))
		check(t, e.s.MarkWorkerConnected(e.ctx, workerA, at))
		check(t, e.s.SetWorkerCapabilities(e.ctx, workerA, []byte(`{"systems": ["x86_64-linux"], "max_jobs": 2}`)))
		check(t, e.s.MarkWorkerSeen(e.ctx, workerA, at.Add(10*time.Second)))
		check(t, e.s.MarkWorkerOffline(e.ctx, workerA, "heartbeat timeout"))
		check(t, e.s.MarkWorkerSeen(e.ctx, workerB, at)) // seen but not registered
		wantErr(t, e.s.SetWorkerCapabilities(e.ctx, workerA, []byte("{not json")), store.ErrInvalid)
		ws := must(e.s.ListWorkers(e.ctx))
		if len(ws) != 2 {
			t.Fatalf("ListWorkers: %+v", ws)
		}
		a := ws[0]
		if a.WorkerID != workerA || !a.Registered || a.DisplayName != "builder-1" || a.OfflineReason != "heartbeat timeout" ||
			!a.LastConnectedAt.Equal(at) || !a.LastSeenAt.Equal(at.Add(10*time.Second)) {
			t.Errorf("worker A = %+v", a)
		}
		var caps map[string]any
		if err := json.Unmarshal(a.Capabilities, &caps); err != nil || caps["max_jobs"] != 2.0 {
			t.Errorf("capabilities %s: %v", a.Capabilities, err)
		}
		if ws[1].Registered {
			t.Errorf("worker B reads as registered: %+v", ws[1])
		}
		check(t, e.s.MarkWorkerConnected(e.ctx, workerA, at.Add(time.Minute)))
		if r := must(e.s.ListWorkers(e.ctx))[0].OfflineReason; r != "" {
			t.Errorf("a new connection keeps offline reason %q", r)
		}
	}},
}
