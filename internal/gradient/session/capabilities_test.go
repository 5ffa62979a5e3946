package session_test

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/session/sessiontest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

func TestNegotiate(t *testing.T) {
	all := wire.GradientCapabilities{Core: true, Cache: true, Fetch: true, Eval: true, Build: true, Federate: true}
	noBuild := sessiontest.Project("nb")
	noBuild.EnableBuild = false
	evalOnly := sessiontest.Project("eo")
	evalOnly.EnableFetch, evalOnly.EnableBuild = false, false
	regs := func(rs ...session.Registration) session.WorkerFacts { return session.WorkerFacts{Registrations: rs} }
	tests := []struct {
		name     string
		worker   wire.GradientCapabilities
		facts    session.WorkerFacts
		federate bool
		want     wire.GradientCapabilities
	}{
		{"gradient-protocol §5: core and cache are the server's: always true, whatever the worker sent",
			wire.GradientCapabilities{}, regs(projA), false,
			wire.GradientCapabilities{Core: true, Cache: true}},
		{"gradient-protocol §5: fetch/eval/build = worker AND registration flags",
			all, regs(projA), false,
			wire.GradientCapabilities{Core: true, Cache: true, Fetch: true, Eval: true, Build: true}},
		{"gradient-protocol §5: one active registration without build clears build",
			all, regs(projA, noBuild), false,
			wire.GradientCapabilities{Core: true, Cache: true, Fetch: true, Eval: true}},
		{"gradient-protocol §5: every registration counts: fetch and build cleared by an eval-only one",
			all, regs(projA, evalOnly), true,
			wire.GradientCapabilities{Core: true, Cache: true, Eval: true, Federate: true}},
		{"gradient-protocol §5: inactive registrations do not clamp",
			all, regs(projA, inactive(evalOnly)), false,
			wire.GradientCapabilities{Core: true, Cache: true, Fetch: true, Eval: true, Build: true}},
		{"gradient-protocol §5: the worker's own flags bound everything",
			wire.GradientCapabilities{Eval: true}, regs(projA), true,
			wire.GradientCapabilities{Core: true, Cache: true, Eval: true}},
		{"gradient-protocol §5: federate = worker AND proto.federate (on)",
			all, regs(projA), true,
			wire.GradientCapabilities{Core: true, Cache: true, Fetch: true, Eval: true, Build: true, Federate: true}},
		{"gradient-protocol §5: federate off by default on the server",
			wire.GradientCapabilities{Federate: true}, regs(projA), false,
			wire.GradientCapabilities{Core: true, Cache: true}},
		{"gradient-protocol §4.2 team worker: no registrations to clamp, worker flags stand",
			wire.GradientCapabilities{Fetch: true, Build: true}, session.WorkerFacts{Registrations: []session.Registration{evalOnly}, Team: &session.TeamWorker{TeamID: "t"}}, false,
			wire.GradientCapabilities{Core: true, Cache: true, Fetch: true, Build: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := session.Negotiate(tc.worker, tc.facts, tc.federate); got != tc.want {
				t.Fatalf("Negotiate = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCacheSessionCapabilities(t *testing.T) {
	// gradient-protocol §5, gradient-protocol §7.1: cache sessions answer
	// {cache: true} and everything else false.
	if got, want := session.CacheSessionCapabilities(), (wire.GradientCapabilities{Cache: true}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestWorkerOfferClearsServerFlags(t *testing.T) {
	// gradient-protocol §5: core and cache are the server's to set; a worker's
	// offer of either is cleared.
	got := session.WorkerOffer(wire.GradientCapabilities{Core: true, Cache: true, Fetch: true, Federate: true})
	if want := (wire.GradientCapabilities{Fetch: true, Federate: true}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
