package session_test

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

var inbound = session.AuthorityConfig{AcceptInbound: true}

// authorityUpToChallenge is the opening every authority script past the lookup shares.
func authorityUpToChallenge(f session.WorkerFacts, challenged ...string) []step {
	return []step{
		{recv(initConn(workerID)), needs(session.LookupWorker{WorkerID: workerID})},
		{facts(f), sends(&wire.AuthChallenge{Peers: challenged})},
	}
}

func authorityReject(code uint16, reason string, before, registered bool) session.Output {
	return ends(session.End{
		Kind: session.EndRejectSent, Code: code, Reason: reason, WorkerID: workerID,
		BeforeTokenCheck: before, Registered: registered,
	}, serverReject(code, reason))
}

func TestAuthorityTransitions(t *testing.T) {
	okResult := session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: []string{"proj-a", "proj-b"}}
	team := &session.TeamWorker{TeamID: "team-1", Enabled: true, Grants: []session.Grant{
		{ProjectID: "p1", HasCache: true}, {ProjectID: "p2"}, {ProjectID: "p1", HasCache: true},
	}}
	tests := []struct {
		name  string
		cfg   session.AuthorityConfig
		steps []step
	}{
		{"gradient-protocol §4.1 as_authority: InitConnection, AuthChallenge, AuthResponse, claim, InitAck → Running", inbound, append(
			authorityUpToChallenge(twoProjs, "proj-a", "proj-b"),
			step{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "ta"), tok("proj-b", "tb")}}),
				needs(session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "ta"), tok("proj-b", "tb")}})},
			step{valid("proj-a", "proj-b"), needs(session.ClaimSession{WorkerID: workerID})},
			step{claimed(true), running(okResult, &wire.InitAck{Capabilities: serverCaps, AuthorizedPeers: []string{"proj-a", "proj-b"}})},
		)},
		{"gradient-protocol §4.1 Opening: another first message → Reject 400 expected InitConnection", inbound, []step{
			{recv(&wire.ReauthRequest{}), ends(session.End{Kind: session.EndRejectSent, Code: 400, Reason: session.ReasonExpectedInitConnection, BeforeTokenCheck: true},
				serverReject(400, "expected InitConnection"))},
		}},
		{"gradient-protocol §4.1 Opening: inbound disabled → Reject 403 server is not accepting connections", session.AuthorityConfig{}, []step{
			{recv(initConn(workerID)), needs(session.LookupWorker{WorkerID: workerID})},
			{facts(twoProjs), authorityReject(403, "server is not accepting connections", true, true)},
		}},
		{"gradient-server §10.8: no registration at all → Reject 403 unknown worker right after InitConnection", inbound, []step{
			{recv(initConn(workerID)), needs(session.LookupWorker{WorkerID: workerID})},
			{facts(session.WorkerFacts{}), authorityReject(403, "unknown worker", true, false)},
		}},
		{"gradient-protocol §4.4 step 2: every registration inactive → Reject 403 worker is deactivated", inbound, []step{
			{recv(initConn(workerID)), needs(session.LookupWorker{WorkerID: workerID})},
			{facts(session.WorkerFacts{Registrations: []session.Registration{inactive(projA)}}), authorityReject(403, "worker is deactivated", true, true)},
		}},
		{"gradient-protocol §4.4 step 1: disabled team worker → Reject 403 worker is deactivated", inbound, []step{
			{recv(initConn(workerID)), needs(session.LookupWorker{WorkerID: workerID})},
			{facts(session.WorkerFacts{Team: &session.TeamWorker{TeamID: "team-1", Grants: team.Grants}}), authorityReject(403, "worker is deactivated", true, true)},
		}},
		{"gradient-protocol §4.4 step 1: team no project grants → Reject 403 no project grants this team's workers", inbound, []step{
			{recv(initConn(workerID)), needs(session.LookupWorker{WorkerID: workerID})},
			{facts(session.WorkerFacts{Team: &session.TeamWorker{TeamID: "team-1", Enabled: true}}), authorityReject(403, "no project grants this team's workers", true, true)},
		}},
		{"gradient-protocol §4.1 AwaitAuth: another message → Reject 400 expected AuthResponse", inbound, append(
			authorityUpToChallenge(twoProjs, "proj-a", "proj-b"),
			step{recv(&wire.RequestJobList{}), authorityReject(400, "expected AuthResponse", true, true)},
		)},
		{"gradient-protocol §4.4 step 3: no token verifies → Reject 401 no valid peer tokens provided", inbound, append(
			authorityUpToChallenge(twoProjs, "proj-a", "proj-b"),
			step{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "bad")}}),
				needs(session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "bad")}})},
			step{valid(), authorityReject(401, "no valid peer tokens provided", false, true)},
		)},
		{"gradient-protocol §4.4 step 3: AuthResponse holding no challenged token → 401 without a VerifyTokens round", inbound, append(
			authorityUpToChallenge(twoProjs, "proj-a", "proj-b"),
			step{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("stranger", "t")}}), authorityReject(401, "no valid peer tokens provided", false, true)},
		)},
		{"gradient-protocol §4.4 step 4: every validated project lacks a cache → Reject 495", inbound, append(
			authorityUpToChallenge(session.WorkerFacts{Registrations: []session.Registration{noCache(projA), projB}}, "proj-a", "proj-b"),
			step{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "ta")}}),
				needs(session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "ta")}})},
			step{valid("proj-a"), authorityReject(495, "project has no cache subscribed", false, true)},
		)},
		{"gradient-protocol §4.1 Go choice (gradient-server §10.3): live session → Reject 496 worker already connected before InitAck", inbound, append(
			authorityUpToChallenge(twoProjs, "proj-a", "proj-b"),
			step{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "ta")}}),
				needs(session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "ta")}})},
			step{valid("proj-a"), needs(session.ClaimSession{WorkerID: workerID})},
			step{claimed(false), authorityReject(496, "worker already connected", false, true)},
		)},
		{"gradient-protocol §4.4 step 5: first pair per peer wins, unchallenged peers ignored, failures reported", inbound, append(
			authorityUpToChallenge(twoProjs, "proj-a", "proj-b"),
			step{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "first"), tok("stranger", "s"), tok("proj-a", "second")}}),
				needs(session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "first")}})},
			step{valid("proj-a", "stranger"), needs(session.ClaimSession{WorkerID: workerID})},
			step{claimed(true), running(
				session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: []string{"proj-a"}, Failed: []wire.FailedPeer{failed("proj-b", "no token provided")}},
				&wire.InitAck{Capabilities: serverCaps, AuthorizedPeers: []string{"proj-a"}, FailedPeers: []wire.FailedPeer{failed("proj-b", "no token provided")}})},
		)},
		{"gradient-protocol §4.2 team worker: challenge names the team, a valid token expands to granting projects", inbound, append(
			authorityUpToChallenge(session.WorkerFacts{Team: team}, "team-1"),
			step{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("team-1", "tt")}}),
				needs(session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("team-1", "tt")}})},
			step{valid("team-1"), needs(session.ClaimSession{WorkerID: workerID})},
			step{claimed(true), running(
				session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: []string{"p1"}, Failed: []wire.FailedPeer{failed("p2", "project has no cache subscribed")}},
				&wire.InitAck{Capabilities: serverCaps, AuthorizedPeers: []string{"p1"}, FailedPeers: []wire.FailedPeer{failed("p2", "project has no cache subscribed")}})},
		)},
		{"gradient-protocol §4.5 / gradient-server §10.3: a ClientReject during the handshake ends the session, nothing sent", inbound, append(
			authorityUpToChallenge(twoProjs, "proj-a", "proj-b"),
			step{recv(clientReject(400, "confused")), ends(session.End{Kind: session.EndRejectReceived, Code: 400, Reason: "confused",
				WorkerID: workerID, BeforeTokenCheck: true, Registered: true})},
		)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, start := session.NewAuthority(tc.cfg)
			runScript(t, a, start, session.Output{}, tc.steps)
		})
	}
}

// runningAuthority is an authority that completed the handshake for proj-a only (proj-b sent
// no token).
func runningAuthority(t *testing.T, f session.WorkerFacts) session.Authority {
	t.Helper()
	a, _ := session.NewAuthority(inbound)
	for _, ev := range []session.Event{
		recv(initConn(workerID)), facts(f),
		recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "ta")}}),
		valid("proj-a"), claimed(true),
	} {
		var out session.Output
		a, out = a.Step(ev)
		if out.Status == session.Ended {
			t.Fatalf("handshake ended: %v", out.End)
		}
	}
	if !a.Running() {
		t.Fatal("authority not running after a full handshake")
	}
	return a
}

func TestAuthorityRunning(t *testing.T) {
	violated := session.End{Kind: session.EndViolation, Code: 400, Reason: "unexpected InitConnection", WorkerID: workerID, Registered: true}
	tests := []struct {
		name  string
		steps []step
	}{
		{"gradient-protocol §1.4: InitConnection after the handshake → Error 400 unexpected InitConnection, and the session ends", []step{
			{recv(initConn(workerID)), ends(violated, &wire.ServerError{Code: 400, Message: "unexpected InitConnection"})},
			{recv(&wire.RequestJobList{}), ends(violated)},
		}},
		{"gradient-server §6: job-loop messages pass to the dispatcher", []step{
			{recv(&wire.RequestJob{Kind: wire.JobKindBuild}), pass()},
			{recv(&wire.ClientDraining{}), pass()},
			{recv(&wire.WorkerMetrics{}), pass()},
		}},
		{"gradient-protocol §4.3: an AuthResponse nobody asked for is dropped", []step{
			{recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-b", "tb")}}), session.Output{}},
		}},
		{"gradient-server §10.3: a ClientReject while running ends the session", []step{
			{recv(clientReject(401, "x")), ends(session.End{Kind: session.EndRejectReceived, Code: 401, Reason: "x", WorkerID: workerID, Registered: true})},
			{recv(&wire.RequestJobList{}), ends(session.End{Kind: session.EndRejectReceived, Code: 401, Reason: "x", WorkerID: workerID, Registered: true})},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := runningAuthority(t, twoProjs)
			runScript(t, a, session.Output{}, session.Output{}, tc.steps)
		})
	}
}

func TestAuthorityDriverContract(t *testing.T) {
	outOfTurn := ends(session.End{Kind: session.EndFault, Err: session.ErrOutOfTurn})
	notForRole := ends(session.End{Kind: session.EndFault, Err: session.ErrNotForRole})
	tests := []struct {
		name  string
		steps []step
	}{
		{"a message while LookupWorker is pending is a fault", []step{
			{recv(initConn(workerID)), needs(session.LookupWorker{WorkerID: workerID})},
			{recv(&wire.AuthResponse{}), outOfTurn},
		}},
		{"the wrong answer to a pending need is a fault", []step{
			{recv(initConn(workerID)), needs(session.LookupWorker{WorkerID: workerID})},
			{claimed(true), outOfTurn},
		}},
		{"an answer nobody asked for is a fault", []step{{valid("proj-a"), outOfTurn}}},
		{"a worker trigger is not for the authority", []step{{session.PeersChanged{}, notForRole}}},
		{"a ServerMessage is the wrong direction", []step{{recv(&wire.InitAck{}), notForRole}}},
		{"a nil message is not for any role", []step{{recv(nil), notForRole}}},
		{"an ended role stays ended and sends nothing", []step{
			{recv(&wire.RequestJobList{}), authorityEnd400()},
			{recv(initConn(workerID)), ends(authorityEnd400().End)},
			{session.ServerReauth{}, ends(authorityEnd400().End)},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, start := session.NewAuthority(inbound)
			runScript(t, a, start, session.Output{}, tc.steps)
		})
	}
}

func authorityEnd400() session.Output {
	return ends(session.End{Kind: session.EndRejectSent, Code: 400, Reason: "expected InitConnection", BeforeTokenCheck: true},
		serverReject(400, "expected InitConnection"))
}
