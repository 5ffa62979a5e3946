package sessiontest_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/session/sessiontest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

const workerID = "0190c3c1-7e0a-7b7e-9c1d-5a1b2c3d4e5f"

var caps = wire.GradientCapabilities{Fetch: true, Eval: true, Build: true}

func tok(peer, token string) wire.PeerToken { return wire.PeerToken{PeerID: peer, Token: token} }

// directory has proj-a and proj-b registered for the worker; proj-b has no cache.
func directory() *sessiontest.Directory {
	d := sessiontest.NewDirectory()
	d.Register(workerID, sessiontest.Project("proj-a"), "ta")
	noCache := sessiontest.Project("proj-b")
	noCache.HasCache = false
	d.Register(workerID, noCache, "tb")
	return d
}

func inboundPair(t *testing.T, dir *sessiontest.Directory, file session.PeerTokens) *sessiontest.Pair[session.Authority, session.Peer] {
	t.Helper()
	a, aOut := session.NewAuthority(session.AuthorityConfig{AcceptInbound: true})
	p, pOut := session.NewPeer(session.PeerConfig{WorkerID: workerID, Capabilities: caps, Tokens: file})
	pair, err := sessiontest.NewPair(a, aOut, dir.Answer, p, pOut, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pair.Run(); err != nil {
		t.Fatal(err)
	}
	return pair
}

func TestAuthorityPeerHandshake(t *testing.T) {
	// gradient-protocol §4.1: authority ↔ peer, through the real codec: both sides end in
	// Running and agree.
	pair := inboundPair(t, directory(), session.NewPeerTokens([]wire.PeerToken{tok("proj-a", "ta"), tok("*", "tb")}))
	if !pair.A.Role.Running() || !pair.B.Role.Running() {
		t.Fatalf("not running: authority %v, peer %v", pair.A.Status(), pair.B.Status())
	}
	want := session.Result{
		WorkerID:     workerID,
		Capabilities: wire.GradientCapabilities{Core: true, Cache: true, Fetch: true, Eval: true, Build: true},
		Authorized:   []string{"proj-a"},
		Failed:       []wire.FailedPeer{{PeerID: "proj-b", Reason: session.FailedNoCache}},
	}
	for side, got := range map[string]session.Result{"authority": pair.A.Role.Result(), "peer": pair.B.Role.Result()} {
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s result (-want +got):\n%s", side, d)
		}
	}
	wantFrames := []string{"B *wire.InitConnection", "A *wire.AuthChallenge", "B *wire.AuthResponse", "A *wire.InitAck"}
	if d := cmp.Diff(wantFrames, frames(pair.Transcript)); d != "" {
		t.Errorf("transcript (-want +got):\n%s", d)
	}
}

func TestDialerDialedHandshake(t *testing.T) {
	// gradient-protocol §4.1: dialer ↔ dialed: Authenticate, InitConnection, InitAck, no
	// challenge round.
	dir := directory()
	d, dOut := session.NewDialer(session.DialerConfig{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "ta"), tok("proj-b", "tb")}})
	w, wOut := session.NewDialed(session.DialedConfig{WorkerID: workerID, Capabilities: caps})
	accepted := sessiontest.ServerTokens{ByPeer: map[string]string{"proj-a": "ta", "*": "tb"}}
	pair, err := sessiontest.NewPair(d, dOut, dir.Answer, w, wOut, accepted.Answer)
	if err != nil {
		t.Fatal(err)
	}
	if err := pair.Run(); err != nil {
		t.Fatal(err)
	}
	if !pair.A.Role.Running() || !pair.B.Role.Running() {
		t.Fatalf("not running: dialer %v, dialed %v", pair.A.Status(), pair.B.Status())
	}
	if d := cmp.Diff(pair.A.Role.Result(), pair.B.Role.Result(), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("sides disagree (-dialer +dialed):\n%s", d)
	}
	wantFrames := []string{"A *wire.Authenticate", "B *wire.InitConnection", "A *wire.InitAck"}
	if d := cmp.Diff(wantFrames, frames(pair.Transcript)); d != "" {
		t.Errorf("transcript (-want +got):\n%s", d)
	}
}

func TestRejectionsReachTheOtherSide(t *testing.T) {
	// gradient-protocol §4.5: each refusal is sent as a Reject and ends the other side with
	// the same code and reason.
	t.Run("gradient-server §10.8 403 unknown worker reaches the peer", func(t *testing.T) {
		pair := inboundPair(t, sessiontest.NewDirectory(), session.NewPeerTokens(nil))
		wantBothEnded(t, pair.A.Role, pair.B.Role, 403, session.ReasonUnknownWorker)
	})
	t.Run("gradient-protocol §4.4 step 3 401 reaches the peer", func(t *testing.T) {
		pair := inboundPair(t, directory(), session.NewPeerTokens([]wire.PeerToken{tok("*", "wrong")}))
		wantBothEnded(t, pair.A.Role, pair.B.Role, 401, session.ReasonNoValidTokens)
	})
	t.Run("gradient-protocol §4.4 step 4 495 reaches the peer", func(t *testing.T) {
		pair := inboundPair(t, directory(), session.NewPeerTokens([]wire.PeerToken{tok("proj-b", "tb")}))
		wantBothEnded(t, pair.A.Role, pair.B.Role, 495, session.ReasonNoCache)
	})
	t.Run("gradient-protocol §4.5 496 reaches the second peer", func(t *testing.T) {
		dir := directory()
		dir.Live[workerID] = true
		pair := inboundPair(t, dir, session.NewPeerTokens([]wire.PeerToken{tok("*", "ta")}))
		wantBothEnded(t, pair.A.Role, pair.B.Role, 496, session.ReasonAlreadyConnected)
	})
	t.Run("gradient-protocol §4.1 as_dialed 401 reaches the dialer", func(t *testing.T) {
		d, dOut := session.NewDialer(session.DialerConfig{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "stale")}})
		w, wOut := session.NewDialed(session.DialedConfig{WorkerID: workerID})
		accepted := sessiontest.ServerTokens{ByPeer: map[string]string{"proj-a": "ta"}}
		pair, err := sessiontest.NewPair(d, dOut, directory().Answer, w, wOut, accepted.Answer)
		if err != nil {
			t.Fatal(err)
		}
		if err := pair.Run(); err != nil {
			t.Fatal(err)
		}
		wantBothEnded(t, pair.B.Role, pair.A.Role, 401, session.ReasonWrongWorkerOrToken)
		if _, reason, keep := session.OfflineReason(mustEnd(t, pair.A.Role)); !keep || reason != "rejected by peer: 401 unknown worker id or wrong token" {
			t.Errorf("dialer's offline reason %q kept=%v", reason, keep)
		}
	})
}

func TestReauthAcrossThePair(t *testing.T) {
	// gradient-protocol §4.3: a new registration (server trigger) and a peers-file change
	// (worker trigger) both end in AuthUpdate on both sides, and the grants only grow.
	dir := directory()
	pair := inboundPair(t, dir, session.NewPeerTokens([]wire.PeerToken{tok("proj-a", "ta")}))
	dir.Register(workerID, sessiontest.Project("proj-c"), "tc")
	if err := pair.StepA(session.ServerReauth{}); err != nil {
		t.Fatal(err)
	}
	if got := pair.B.Role.Result().Authorized; !slices.Equal(got, []string{"proj-a"}) {
		t.Fatalf("peer holds no token for proj-c yet, grants %v", got)
	}
	file := session.NewPeerTokens([]wire.PeerToken{tok("proj-c", "tc")}) // proj-a's line removed
	if err := pair.StepB(session.PeersChanged{Tokens: file}); err != nil {
		t.Fatal(err)
	}
	for side, r := range map[string]session.Result{"authority": pair.A.Role.Result(), "peer": pair.B.Role.Result()} {
		if !slices.Equal(r.Authorized, []string{"proj-a", "proj-c"}) {
			t.Errorf("%s grants %v, want [proj-a proj-c] (proj-a kept though its line is gone)", side, r.Authorized)
		}
	}
	if pair.A.Status() != session.Reauthorized || pair.B.Status() != session.Reauthorized {
		t.Errorf("statuses %v / %v, want Reauthorized", pair.A.Status(), pair.B.Status())
	}
}

func TestServerDialedReauthRedials(t *testing.T) {
	// gradient-protocol §4.3: a server-dialed reauth finding a new registration with a stored
	// token closes the session, so the next dial carries that token.
	dir := sessiontest.NewDirectory()
	dir.Register(workerID, withDialToken(sessiontest.Project("proj-a")), "ta")
	d, dOut := session.NewDialer(session.DialerConfig{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "ta")}})
	w, wOut := session.NewDialed(session.DialedConfig{WorkerID: workerID})
	pair, err := sessiontest.NewPair(d, dOut, dir.Answer, w, wOut, sessiontest.ServerTokens{AcceptAll: true}.Answer)
	if err != nil {
		t.Fatal(err)
	}
	if err := pair.Run(); err != nil {
		t.Fatal(err)
	}
	if err := pair.StepB(session.PeersChanged{}); err != nil { // ReauthRequest → AuthUpdate alone
		t.Fatal(err)
	}
	if pair.B.Status() != session.Reauthorized || !slices.Contains(frames(pair.Transcript), "A *wire.AuthUpdate") {
		t.Fatalf("server-dialed reauth did not end in AuthUpdate: %v", frames(pair.Transcript))
	}
	dir.Register(workerID, withDialToken(sessiontest.Project("proj-c")), "tc")
	if err := pair.StepA(session.ServerReauth{}); err != nil {
		t.Fatal(err)
	}
	if e := mustEnd(t, pair.A.Role); e.Kind != session.EndRedial {
		t.Fatalf("dialer ended with %v, want a redial", e)
	}
}

func withDialToken(r session.Registration) session.Registration {
	r.HasDialToken = true
	return r
}

// wantBothEnded: the refusing side sent the Reject, the other received the same one.
func wantBothEnded[R session.Role[R], O session.Role[O]](t *testing.T, refuser R, other O, code uint16, reason string) {
	t.Helper()
	sent, received := mustEnd(t, refuser), mustEnd(t, other)
	if sent.Kind != session.EndRejectSent || sent.Code != code || sent.Reason != reason {
		t.Errorf("refusing side ended %v %d %q, want RejectSent %d %q", sent.Kind, sent.Code, sent.Reason, code, reason)
	}
	if received.Kind != session.EndRejectReceived || received.Code != code || received.Reason != reason {
		t.Errorf("other side ended %v %d %q, want RejectReceived %d %q", received.Kind, received.Code, received.Reason, code, reason)
	}
}

func mustEnd[R session.Role[R]](t *testing.T, r R) session.End {
	t.Helper()
	e, ok := r.Done()
	if !ok {
		t.Fatalf("role has not ended (running %v)", r.Running())
	}
	return e
}

func frames(fs []sessiontest.Frame) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = fmt.Sprintf("%s %T", f.From, f.Msg)
	}
	return out
}
