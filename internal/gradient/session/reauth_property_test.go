package session_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// gradient-protocol §4.3 "reauth never revokes": across any number of reauth rounds with any
// facts, tokens and verdicts, the authority's grants are exactly the union of the old grants
// and each round's decision, AuthUpdate tells the worker that set, and no granted peer is
// reported as failed.
func TestPropertyAuthorityGrantsNeverShrink(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := runningAuthorityRapid(t)
		for range rapid.IntRange(1, 8).Draw(t, "rounds") {
			before := a.Result().Authorized
			trigger := rapid.SampledFrom([]session.Event{session.ServerReauth{}, recv(&wire.ReauthRequest{})}).Draw(t, "trigger")
			a, _ = a.Step(trigger)
			f := drawFacts(t)
			var out session.Output
			if a, out = a.Step(facts(f)); out.Status == session.Ended {
				wantDeactivation(t, f, out)
				return
			}
			response := workerReply(t, out.Send[0]).(*wire.AuthResponse)
			offered := firstChallenged(response.Tokens, f.Challenge())
			a, out = a.Step(recv(response))
			verdict := session.TokensAnswer{}
			if out.Need != nil {
				verdict = drawAnswer(t, out.Need).(session.TokensAnswer)
				a, out = a.Step(verdict)
			}
			decision := session.Authorize(session.AuthInput{Facts: f, Offered: offered, Valid: verdict.Valid})
			checkRound(t, before, decision, out)
		}
	})
}

// The same for the Dialer, whose reauth is a lookup and AuthUpdate alone
// (gradient-protocol §4.3).
func TestPropertyDialerGrantsNeverShrink(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sent := []wire.PeerToken{tok("proj-a", "ta"), tok("proj-b", "tb"), tok("cache-1", "tc")}
		d, _ := session.NewDialer(session.DialerConfig{WorkerID: workerID, Tokens: sent})
		for _, ev := range []session.Event{recv(initConn(workerID)), facts(twoProjs), claimed(true)} {
			d, _ = d.Step(ev)
		}
		for range rapid.IntRange(1, 8).Draw(t, "rounds") {
			before := d.Result().Authorized
			d, _ = d.Step(rapid.SampledFrom([]session.Event{session.ServerReauth{}, recv(&wire.ReauthRequest{})}).Draw(t, "trigger"))
			f := drawFacts(t)
			var out session.Output
			if d, out = d.Step(facts(f)); out.Status == session.Ended {
				if out.End.Kind != session.EndRedial {
					wantDeactivation(t, f, out)
				}
				return
			}
			ids := []string{"proj-a", "proj-b", "cache-1"}
			checkRound(t, before, session.Authorize(session.AuthInput{Facts: f, Offered: ids, Valid: ids}), out)
		}
	})
}

func runningAuthorityRapid(t *rapid.T) session.Authority {
	a, _ := session.NewAuthority(inbound)
	for _, ev := range []session.Event{
		recv(initConn(workerID)), facts(twoProjs),
		recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "ta")}}),
		valid("proj-a"), claimed(true),
	} {
		a, _ = a.Step(ev)
	}
	if !a.Running() {
		t.Fatal("authority not running")
	}
	return a
}

func firstChallenged(tokens []wire.PeerToken, challenged []string) []string {
	var ids []string
	for _, tk := range tokens {
		if slices.Contains(challenged, tk.PeerID) && !slices.Contains(ids, tk.PeerID) {
			ids = append(ids, tk.PeerID)
		}
	}
	return ids
}

func wantDeactivation(t *rapid.T, f session.WorkerFacts, out session.Output) {
	r, ok := session.Precheck(f)
	if ok || r.Reason == session.ReasonNoTeamGrant || out.End.Kind != session.EndRejectSent || out.End.Reason != r.Reason {
		t.Fatalf("reauth ended with %v for facts that precheck as (%v, %v)", out.End, r, ok)
	}
}

func checkRound(t *rapid.T, before []string, d session.Decision, out session.Output) {
	if out.Status != session.Reauthorized || len(out.Send) != 1 {
		t.Fatalf("round ended as %v with %d messages", out.Status, len(out.Send))
	}
	want := slices.Clone(before)
	for _, id := range d.Authorized {
		if !slices.Contains(want, id) {
			want = append(want, id)
		}
	}
	if !cmp.Equal(want, out.Result.Authorized) {
		t.Fatalf("authorized %v, want old %v ∪ round %v", out.Result.Authorized, before, d.Authorized)
	}
	update, ok := out.Send[0].(*wire.AuthUpdate)
	if !ok || !cmp.Equal(update.AuthorizedPeers, out.Result.Authorized) || !cmp.Equal(update.FailedPeers, out.Result.Failed, outputCmp...) {
		t.Fatalf("AuthUpdate %v does not match result %+v", out.Send[0], out.Result)
	}
	for _, f := range out.Result.Failed {
		if slices.Contains(want, f.PeerID) {
			t.Fatalf("granted peer %q reported as failed", f.PeerID)
		}
	}
}

// gradient-server §10.3 and gradient-protocol §4.1 as_peer: "workers must be ready for a
// Reject at any point". Every state a Peer can wait in takes a Reject and ends with it,
// sending nothing.
func TestPeerTakesRejectInEveryState(t *testing.T) {
	challenge := recv(&wire.AuthChallenge{Peers: []string{"proj-a"}})
	changed := session.PeersChanged{Tokens: session.NewPeerTokens(nil)}
	states := map[string][]session.Event{
		"gradient-protocol §4.1 waiting for AuthChallenge":                   nil,
		"gradient-protocol §4.1 waiting for InitAck":                         {challenge},
		"gradient-protocol §4.3 waiting for InitAck, peers file changed":     {challenge, changed},
		"gradient-protocol §4.1 running":                                     {challenge, recv(ack)},
		"gradient-protocol §4.3 running, reauth challenge answered":          {challenge, recv(ack), challenge},
		"gradient-protocol §4.3 running, ReauthRequest sent":                 {challenge, recv(ack), changed},
		"gradient-protocol §4.3 running, after an AuthUpdate":                {challenge, recv(ack), recv(&wire.AuthUpdate{AuthorizedPeers: []string{"proj-b"}})},
		"gradient-protocol §7.1 running without a challenge (cache)":         {recv(ack)},
		"gradient-protocol §4.1 running, after a job message passed through": {challenge, recv(ack), recv(&wire.AssignJob{})},
	}
	for name, prefix := range states {
		t.Run(name, func(t *testing.T) {
			p, _ := session.NewPeer(peerCfg)
			for _, ev := range prefix {
				var out session.Output
				if p, out = p.Step(ev); out.Status == session.Ended {
					t.Fatalf("prefix ended: %v", out.End)
				}
			}
			for _, code := range []uint16{400, 401, 403, 495, 496} {
				_, out := p.Step(recv(serverReject(code, "r")))
				want := ends(session.End{Kind: session.EndRejectReceived, Code: code, Reason: "r", WorkerID: workerID})
				if d := cmp.Diff(want, out, outputCmp...); d != "" {
					t.Fatalf("Reject %d (-want +got):\n%s", code, d)
				}
			}
		})
	}
}

// The dialed worker likewise takes a Reject wherever it waits for a message.
func TestDialedTakesRejectInEveryState(t *testing.T) {
	auth := recv(&wire.Authenticate{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "ta")}})
	states := map[string][]session.Event{
		"gradient-protocol §4.1 waiting for Authenticate": nil,
		"gradient-protocol §4.1 waiting for InitAck":      {auth, valid("proj-a")},
		"gradient-protocol §4.1 running":                  {auth, valid("proj-a"), recv(ack)},
	}
	for name, prefix := range states {
		t.Run(name, func(t *testing.T) {
			w, _ := session.NewDialed(dialedCfg)
			for _, ev := range prefix {
				w, _ = w.Step(ev)
			}
			_, out := w.Step(recv(serverReject(403, "worker is deactivated")))
			want := ends(session.End{Kind: session.EndRejectReceived, Code: 403, Reason: "worker is deactivated", WorkerID: workerID})
			if d := cmp.Diff(want, out, outputCmp...); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
		})
	}
}
