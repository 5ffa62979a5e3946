package session_test

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// BenchmarkAuthorityHandshake steps a server through one full worker-dialed handshake (five
// events, answers included): the session's own cost per connecting worker, without codec,
// socket, SQL or argon2.
func BenchmarkAuthorityHandshake(b *testing.B) {
	events := []session.Event{
		recv(initConn(workerID)), facts(twoProjs),
		recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "ta"), tok("proj-b", "tb")}}),
		valid("proj-a", "proj-b"), claimed(true),
	}
	b.ReportAllocs()
	for b.Loop() {
		a, _ := session.NewAuthority(inbound)
		var out session.Output
		for _, ev := range events {
			a, out = a.Step(ev)
		}
		if out.Status != session.Running {
			b.Fatal(out.End)
		}
	}
}

// BenchmarkPeerHandshake is the worker's side: InitConnection, AuthResponse, InitAck.
func BenchmarkPeerHandshake(b *testing.B) {
	challenge := recv(&wire.AuthChallenge{Peers: []string{"proj-a", "proj-b"}})
	b.ReportAllocs()
	for b.Loop() {
		p, _ := session.NewPeer(peerCfg)
		p, _ = p.Step(challenge)
		if _, out := p.Step(recv(ack)); out.Status != session.Running {
			b.Fatal(out.End)
		}
	}
}

// BenchmarkPassThrough is the per-message cost a running session adds to the job loop when the
// driver routes every received message through Step.
func BenchmarkPassThrough(b *testing.B) {
	a := runningAuthorityBench(b)
	ev := recv(&wire.WorkerMetrics{})
	b.ReportAllocs()
	for b.Loop() {
		if _, out := a.Step(ev); out.Status != session.Pass {
			b.Fatal(out.Status)
		}
	}
}

func runningAuthorityBench(b *testing.B) session.Authority {
	a, _ := session.NewAuthority(inbound)
	for _, ev := range []session.Event{
		recv(initConn(workerID)), facts(twoProjs),
		recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "ta")}}), valid("proj-a"), claimed(true),
	} {
		a, _ = a.Step(ev)
	}
	if !a.Running() {
		b.Fatal("not running")
	}
	return a
}
