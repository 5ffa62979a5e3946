package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
)

func TestGrantsSortAuthorizedPeersByKind(t *testing.T) {
	facts := session.WorkerFacts{Registrations: []session.Registration{
		{PeerID: "p1", Kind: session.PeerProject, Active: true},
		{PeerID: "p2", Kind: session.PeerProject, Active: false},
		{PeerID: "c1", Kind: session.PeerCache, Active: true},
		{PeerID: "p3", Kind: session.PeerProject, Active: true},
	}}
	g := grantsOf(session.Result{Authorized: []string{"p3", "c1", "p2", "p1", "stranger"}}, facts)
	if !cmp.Equal(g.projects, []string{"p1", "p3"}) || !cmp.Equal(g.directCaches, []string{"c1"}) {
		t.Fatalf("%+v", g)
	}
}

func TestATeamWorkersTeamExpandsToItsGrantingProjects(t *testing.T) {
	facts := session.WorkerFacts{Team: &session.TeamWorker{TeamID: "t", Enabled: true,
		Grants: []session.Grant{{ProjectID: "p2", HasCache: true}, {ProjectID: "p1", HasCache: true}}}}
	g := grantsOf(session.Result{Authorized: []string{"t"}}, facts)
	if !cmp.Equal(g.projects, []string{"p1", "p2"}) || len(g.directCaches) != 0 {
		t.Fatalf("%+v", g)
	}
}

func TestRegistryHoldsOneSessionPerWorkerID(t *testing.T) {
	r := newRegistry()
	if !r.claim("w") || r.claim("w") {
		t.Fatal("a second claim of a held ID succeeded")
	}
	if r.get("w") != nil || len(r.all()) != 0 {
		t.Fatal("a claimed slot shows a running session before attach")
	}
	w := &worker{id: "w"}
	r.attach(w)
	r.release("w", &worker{id: "w"}) // another session's end must not free this one's slot
	if r.get("w") != w {
		t.Fatal("released by a stranger")
	}
	r.release("w", w)
	if !r.claim("w") {
		t.Fatal("the slot was not freed")
	}
}
