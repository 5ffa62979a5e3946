package session_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/session/sessiontest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// A script is a sequence of events and the exact Output each must produce, in the style of
// etcd raft's interaction tests: every transition of a role is one step of some script.
type step struct {
	ev   session.Event
	want session.Output
}

var outputCmp = []cmp.Option{cmpopts.EquateEmpty(), cmpopts.EquateErrors()}

// runScript checks the start output, then steps the role through the script.
func runScript[S session.Role[S]](t *testing.T, role S, gotStart, wantStart session.Output, steps []step) S {
	t.Helper()
	if d := cmp.Diff(wantStart, gotStart, outputCmp...); d != "" {
		t.Fatalf("start output (-want +got):\n%s", d)
	}
	for i, s := range steps {
		var got session.Output
		role, got = role.Step(s.ev)
		if d := cmp.Diff(s.want, got, outputCmp...); d != "" {
			t.Fatalf("step %d (%T) output (-want +got):\n%s", i, s.ev, d)
		}
	}
	return role
}

func recv(m wire.Message) session.Event { return session.Received{Msg: m} }

func sends(ms ...wire.Message) session.Output { return session.Output{Send: ms} }

func needs(n session.Need) session.Output { return session.Output{Need: n} }

func pass() session.Output { return session.Output{Status: session.Pass} }

func running(r session.Result, ms ...wire.Message) session.Output {
	return session.Output{Send: ms, Status: session.Running, Result: r}
}

func reauthorized(r session.Result, ms ...wire.Message) session.Output {
	return session.Output{Send: ms, Status: session.Reauthorized, Result: r}
}

func ends(e session.End, ms ...wire.Message) session.Output {
	return session.Output{Send: ms, Status: session.Ended, End: e}
}

func facts(f session.WorkerFacts) session.Event { return session.FactsAnswer{Facts: f} }

func valid(ids ...string) session.Event { return session.TokensAnswer{Valid: ids} }

func claimed(ok bool) session.Event { return session.ClaimAnswer{Claimed: ok} }

func tok(peer, token string) wire.PeerToken { return wire.PeerToken{PeerID: peer, Token: token} }

func failed(peer, reason string) wire.FailedPeer {
	return wire.FailedPeer{PeerID: peer, Reason: reason}
}

func serverReject(code uint16, reason string) *wire.ServerReject {
	return &wire.ServerReject{Code: code, Reason: reason}
}

func clientReject(code uint16, reason string) *wire.ClientReject {
	return &wire.ClientReject{Code: code, Reason: reason}
}

// Fixtures shared by the role tests.
const (
	workerID = "0190c3c1-7e0a-7b7e-9c1d-5a1b2c3d4e5f"
	otherID  = "0190c3c1-0000-7000-8000-000000000000"
)

var (
	workerCaps = wire.GradientCapabilities{Core: true, Cache: true, Fetch: true, Eval: true, Build: true, Federate: true}
	// offeredCaps is workerCaps as a worker sends it: core and cache cleared
	// (gradient-protocol §5).
	offeredCaps = wire.GradientCapabilities{Fetch: true, Eval: true, Build: true, Federate: true}
	// serverCaps is what the server negotiates for offeredCaps with full registrations and
	// federation off.
	serverCaps = wire.GradientCapabilities{Core: true, Cache: true, Fetch: true, Eval: true, Build: true}
	projA      = sessiontest.Project("proj-a")
	projB      = sessiontest.Project("proj-b")
	twoProjs   = session.WorkerFacts{Registrations: []session.Registration{projA, projB}}
)

func initConn(id string) *wire.InitConnection {
	return &wire.InitConnection{Capabilities: offeredCaps, ID: id}
}

func noCache(r session.Registration) session.Registration {
	r.HasCache = false
	return r
}

func inactive(r session.Registration) session.Registration {
	r.Active = false
	return r
}

func dialable(r session.Registration) session.Registration {
	r.HasDialToken = true
	return r
}
