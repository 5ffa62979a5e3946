package session_test

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/session/sessiontest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

func TestAuthorityReauth(t *testing.T) {
	lookup := needs(session.LookupWorker{WorkerID: workerID})
	projC := session.WorkerFacts{Registrations: []session.Registration{projA, projB, sessiontest.Project("proj-c")}}
	result := func(auth []string, fails ...wire.FailedPeer) session.Result {
		return session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: auth, Failed: fails}
	}
	update := func(auth []string, fails ...wire.FailedPeer) *wire.AuthUpdate {
		return &wire.AuthUpdate{AuthorizedPeers: auth, FailedPeers: fails}
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"gradient-protocol §4.3 ReauthRequest: LookupWorker, AuthChallenge{all active peers}, AuthResponse, AuthUpdate{union}", []step{
			{recv(&wire.ReauthRequest{}), lookup},
			{facts(projC), sends(&wire.AuthChallenge{Peers: []string{"proj-a", "proj-b", "proj-c"}})},
			{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-c", "tc")}}),
				needs(session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-c", "tc")}})},
			// proj-a sent no token this round: it stays granted and is not reported as failed.
			{valid("proj-c"), reauthorized(result([]string{"proj-a", "proj-c"}, failed("proj-b", "no token provided")),
				update([]string{"proj-a", "proj-c"}, failed("proj-b", "no token provided")))},
		}},
		{"gradient-protocol §4.3 server trigger (new registration): the same round, started by ServerReauth", []step{
			{session.ServerReauth{}, lookup},
			{facts(projC), sends(&wire.AuthChallenge{Peers: []string{"proj-a", "proj-b", "proj-c"}})},
			{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-b", "tb"), tok("proj-c", "tc")}}),
				needs(session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-b", "tb"), tok("proj-c", "tc")}})},
			{valid("proj-b", "proj-c"), reauthorized(result([]string{"proj-a", "proj-b", "proj-c"}),
				update([]string{"proj-a", "proj-b", "proj-c"}))},
		}},
		{"gradient-protocol §4.3 a failing token never removes an earlier grant, even when the round would be 401", []step{
			{session.ServerReauth{}, lookup},
			{facts(twoProjs), sends(&wire.AuthChallenge{Peers: []string{"proj-a", "proj-b"}})},
			{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "rotated"), tok("proj-b", "bad")}}),
				needs(session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "rotated"), tok("proj-b", "bad")}})},
			{valid(), reauthorized(result([]string{"proj-a"}, failed("proj-b", "invalid token")),
				update([]string{"proj-a"}, failed("proj-b", "invalid token")))},
		}},
		{"gradient-protocol §4.3 a project subscribing to a cache joins the session", []step{
			{session.ServerReauth{}, lookup},
			{facts(twoProjs), sends(&wire.AuthChallenge{Peers: []string{"proj-a", "proj-b"}})},
			{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "ta"), tok("proj-b", "tb")}}),
				needs(session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "ta"), tok("proj-b", "tb")}})},
			{valid("proj-a", "proj-b"), reauthorized(result([]string{"proj-a", "proj-b"}), update([]string{"proj-a", "proj-b"}))},
		}},
		{"gradient-protocol §4.3 all registrations deactivated while connected → Reject 403 worker is deactivated", []step{
			{session.ServerReauth{}, lookup},
			{facts(session.WorkerFacts{Registrations: []session.Registration{inactive(projA), inactive(projB)}}),
				ends(session.End{Kind: session.EndRejectSent, Code: 403, Reason: "worker is deactivated", WorkerID: workerID, Registered: true},
					serverReject(403, "worker is deactivated"))},
		}},
		{"gradient-protocol §4.3 triggers during a round queue exactly one more round, started after AuthUpdate", []step{
			{session.ServerReauth{}, lookup},
			{facts(twoProjs), sends(&wire.AuthChallenge{Peers: []string{"proj-a", "proj-b"}})},
			{recv(&wire.ReauthRequest{}), session.Output{}},
			{session.ServerReauth{}, session.Output{}},
			{recv(&wire.AuthResponse{}), session.Output{
				Send:   []wire.Message{update([]string{"proj-a"}, failed("proj-b", "no token provided"))},
				Status: session.Reauthorized, Result: result([]string{"proj-a"}, failed("proj-b", "no token provided")),
				Need: session.LookupWorker{WorkerID: workerID},
			}},
			{facts(twoProjs), sends(&wire.AuthChallenge{Peers: []string{"proj-a", "proj-b"}})},
		}},
		{"gradient-protocol §4.3 job messages keep flowing while a challenge is outstanding", []step{
			{session.ServerReauth{}, lookup},
			{facts(twoProjs), sends(&wire.AuthChallenge{Peers: []string{"proj-a", "proj-b"}})},
			{recv(&wire.RequestJob{}), pass()},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := runningAuthority(t, twoProjs)
			runScript(t, a, session.Output{}, session.Output{}, tc.steps)
		})
	}
}

// gradient-protocol §4.3: a trigger that arrives during the handshake (after the lookup) is
// not lost: the output that sends InitAck also asks for the lookup of the queued round.
func TestAuthorityReauthQueuedDuringHandshake(t *testing.T) {
	a, start := session.NewAuthority(inbound)
	runScript(t, a, start, session.Output{}, append(
		authorityUpToChallenge(twoProjs, "proj-a", "proj-b"),
		step{session.ServerReauth{}, session.Output{}},
		step{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "ta")}}),
			needs(session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "ta")}})},
		step{valid("proj-a"), needs(session.ClaimSession{WorkerID: workerID})},
		step{claimed(true), session.Output{
			Send: []wire.Message{&wire.InitAck{Capabilities: serverCaps, AuthorizedPeers: []string{"proj-a"},
				FailedPeers: []wire.FailedPeer{failed("proj-b", "no token provided")}}},
			Status: session.Running,
			Result: session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: []string{"proj-a"},
				Failed: []wire.FailedPeer{failed("proj-b", "no token provided")}},
			Need: session.LookupWorker{WorkerID: workerID},
		}},
	))
}
