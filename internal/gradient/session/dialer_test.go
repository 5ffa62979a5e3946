package session_test

import (
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/session/sessiontest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

var dialerCfg = session.DialerConfig{
	WorkerID: workerID,
	Tokens:   []wire.PeerToken{tok("proj-a", "ta"), tok("proj-a", "dup"), tok("proj-b", "tb")},
}

// authenticate is what NewDialer(dialerCfg) sends: the first pair per peer.
var authenticate = &wire.Authenticate{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "ta"), tok("proj-b", "tb")}}

func dialerReject(code uint16, reason string) session.Output {
	return ends(session.End{Kind: session.EndRejectSent, Code: code, Reason: reason, WorkerID: workerID, Registered: true},
		serverReject(code, reason))
}

func TestDialerTransitions(t *testing.T) {
	lookup := needs(session.LookupWorker{WorkerID: workerID})
	claim := needs(session.ClaimSession{WorkerID: workerID})
	three := session.WorkerFacts{Registrations: []session.Registration{projA, projB, sessiontest.Project("proj-c")}}
	team := session.WorkerFacts{Team: &session.TeamWorker{TeamID: "team-1", Enabled: true, Grants: []session.Grant{{ProjectID: "p1", HasCache: true}}}}
	tests := []struct {
		name  string
		cfg   session.DialerConfig
		steps []step
	}{
		{"gradient-protocol §4.1 as_dialer: Authenticate, InitConnection, InitAck with no challenge round → Running", dialerCfg, []step{
			{recv(initConn(workerID)), lookup},
			{facts(twoProjs), claim},
			{claimed(true), running(session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: []string{"proj-a", "proj-b"}},
				&wire.InitAck{Capabilities: serverCaps, AuthorizedPeers: []string{"proj-a", "proj-b"}})},
		}},
		{"gradient-protocol §4.1 as_dialer: a registration without a token at this URL is failed with no token provided", dialerCfg, []step{
			{recv(initConn(workerID)), lookup},
			{facts(three), claim},
			{claimed(true), running(session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: []string{"proj-a", "proj-b"},
				Failed: []wire.FailedPeer{failed("proj-c", "no token provided")}},
				&wire.InitAck{Capabilities: serverCaps, AuthorizedPeers: []string{"proj-a", "proj-b"}, FailedPeers: []wire.FailedPeer{failed("proj-c", "no token provided")}})},
		}},
		{"gradient-protocol §4.1 as_dialer: InitConnection under another ID → Reject 400 dialed worker answered as <id>", dialerCfg, []step{
			{recv(initConn(otherID)), dialerReject(400, "dialed worker answered as "+otherID)},
		}},
		{"gradient-protocol §4.5 400: a first answer other than InitConnection → Reject 400 expected InitConnection", dialerCfg, []step{
			{recv(&wire.AuthResponse{}), dialerReject(400, "expected InitConnection")},
		}},
		{"gradient-protocol §4.1 as_dialer: the worker's Reject ends the session (kept as offline reason)", dialerCfg, []step{
			{recv(clientReject(401, "unknown worker id or wrong token")),
				ends(session.End{Kind: session.EndRejectReceived, Code: 401, Reason: "unknown worker id or wrong token", WorkerID: workerID, Registered: true})},
		}},
		{"gradient-server §10.9: no open mode: a server-dialed unregistered worker → Reject 403 unknown worker", dialerCfg, []step{
			{recv(initConn(workerID)), lookup},
			{facts(session.WorkerFacts{}), dialerReject(403, "unknown worker")},
		}},
		{"gradient-protocol §4.4 step 2: registrations deactivated since the dial → Reject 403 worker is deactivated", dialerCfg, []step{
			{recv(initConn(workerID)), lookup},
			{facts(session.WorkerFacts{Registrations: []session.Registration{inactive(projA)}}), dialerReject(403, "worker is deactivated")},
		}},
		{"gradient-protocol §4.4 step 3: no stored token was sent → Reject 401 no valid peer tokens provided", session.DialerConfig{WorkerID: workerID}, []step{
			{recv(initConn(workerID)), lookup},
			{facts(twoProjs), dialerReject(401, "no valid peer tokens provided")},
		}},
		{"gradient-protocol §4.4 step 4: every accepted project lacks a cache → Reject 495", dialerCfg, []step{
			{recv(initConn(workerID)), lookup},
			{facts(session.WorkerFacts{Registrations: []session.Registration{noCache(projA), noCache(projB)}}), dialerReject(495, "project has no cache subscribed")},
		}},
		{"gradient-protocol §4.5 496: a live session holds the ID → Reject 496 worker already connected", dialerCfg, []step{
			{recv(initConn(workerID)), lookup},
			{facts(twoProjs), claim},
			{claimed(false), dialerReject(496, "worker already connected")},
		}},
		{"gradient-protocol §4.2 team worker dialed with the team token → granting projects", session.DialerConfig{WorkerID: workerID, Tokens: []wire.PeerToken{tok("team-1", "tt")}}, []step{
			{recv(initConn(workerID)), lookup},
			{facts(team), claim},
			{claimed(true), running(session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: []string{"p1"}},
				&wire.InitAck{Capabilities: serverCaps, AuthorizedPeers: []string{"p1"}})},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, start := session.NewDialer(tc.cfg)
			want := sends(&wire.Authenticate{WorkerID: workerID, Tokens: selectFirst(tc.cfg.Tokens)})
			runScript(t, d, start, want, tc.steps)
		})
	}
}

// selectFirst keeps the first pair per peer, as the Dialer does.
func selectFirst(ts []wire.PeerToken) []wire.PeerToken {
	seen := map[string]bool{}
	var out []wire.PeerToken
	for _, t := range ts {
		if !seen[t.PeerID] {
			seen[t.PeerID] = true
			out = append(out, t)
		}
	}
	return out
}

func TestDialedAnsweredAsIsBounded(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes, two per rune
	got := session.DialedAnsweredAs(long)
	if !strings.HasPrefix(got, "dialed worker answered as é") || !strings.HasSuffix(got, "…") {
		t.Fatalf("reason %q", got)
	}
	if n := len(got) - len("dialed worker answered as ") - len("…"); n > 128 || n%2 != 0 {
		t.Fatalf("echoed %d bytes of the ID, want ≤128 on a rune boundary", n)
	}
	if got := session.DialedAnsweredAs(otherID); got != "dialed worker answered as "+otherID {
		t.Fatalf("short ID changed: %q", got)
	}
}

func runningDialer(t *testing.T, f session.WorkerFacts) session.Dialer {
	t.Helper()
	d, _ := session.NewDialer(dialerCfg)
	for _, ev := range []session.Event{recv(initConn(workerID)), facts(f), claimed(true)} {
		var out session.Output
		if d, out = d.Step(ev); out.Status == session.Ended {
			t.Fatalf("handshake ended: %v", out.End)
		}
	}
	return d
}

func TestDialerReauth(t *testing.T) {
	lookup := needs(session.LookupWorker{WorkerID: workerID})
	base := session.WorkerFacts{Registrations: []session.Registration{dialable(projA), noCache(dialable(projB))}}
	grown := session.WorkerFacts{Registrations: []session.Registration{dialable(projA), dialable(projB)}}
	result := func(auth []string, fails ...wire.FailedPeer) session.Result {
		return session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: auth, Failed: fails}
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"gradient-protocol §4.3 server-dialed: a ReauthRequest is answered with AuthUpdate alone (proj-b now has a cache)", []step{
			{recv(&wire.ReauthRequest{}), lookup},
			{facts(grown), reauthorized(result([]string{"proj-a", "proj-b"}), &wire.AuthUpdate{AuthorizedPeers: []string{"proj-a", "proj-b"}})},
		}},
		{"gradient-protocol §4.3 server-dialed: a server trigger is answered with AuthUpdate alone, never AuthChallenge", []step{
			{session.ServerReauth{}, lookup},
			{facts(base), reauthorized(result([]string{"proj-a"}, failed("proj-b", "project has no cache subscribed")),
				&wire.AuthUpdate{AuthorizedPeers: []string{"proj-a"}, FailedPeers: []wire.FailedPeer{failed("proj-b", "project has no cache subscribed")}})},
		}},
		{"gradient-protocol §4.3 server-dialed: a new registration with a token for this URL closes the session to redial", []step{
			{session.ServerReauth{}, lookup},
			{facts(session.WorkerFacts{Registrations: []session.Registration{dialable(projA), dialable(projB), dialable(sessiontest.Project("proj-c"))}}),
				ends(session.End{Kind: session.EndRedial, WorkerID: workerID, Registered: true})},
		}},
		{"gradient-protocol §4.3 server-dialed: a new registration without a stored token does not redial", []step{
			{session.ServerReauth{}, lookup},
			{facts(session.WorkerFacts{Registrations: []session.Registration{dialable(projA), noCache(dialable(projB)), sessiontest.Project("proj-c")}}),
				reauthorized(result([]string{"proj-a"}, failed("proj-c", "no token provided"), failed("proj-b", "project has no cache subscribed")),
					&wire.AuthUpdate{AuthorizedPeers: []string{"proj-a"}, FailedPeers: []wire.FailedPeer{
						failed("proj-c", "no token provided"), failed("proj-b", "project has no cache subscribed")}})},
		}},
		{"gradient-protocol §4.3 all registrations deactivated → Reject 403 worker is deactivated", []step{
			{session.ServerReauth{}, lookup},
			{facts(session.WorkerFacts{Registrations: []session.Registration{inactive(projA)}}), dialerReject(403, "worker is deactivated")},
		}},
		{"gradient-protocol §1.4: an AuthResponse nobody asked for is dropped; job messages pass", []step{
			{recv(&wire.AuthResponse{}), session.Output{}},
			{recv(&wire.RequestJob{}), pass()},
		}},
		{"gradient-protocol §1.4: InitConnection after the handshake → Error 400, and the session ends", []step{
			{recv(initConn(workerID)), ends(session.End{Kind: session.EndViolation, Code: 400, Reason: "unexpected InitConnection", WorkerID: workerID, Registered: true},
				&wire.ServerError{Code: 400, Message: "unexpected InitConnection"})},
		}},
		{"gradient-server §10.3: a ClientReject while running ends the session", []step{
			{recv(clientReject(400, "bye")), ends(session.End{Kind: session.EndRejectReceived, Code: 400, Reason: "bye", WorkerID: workerID, Registered: true})},
		}},
		{"driver contract: a TokensAnswer is never asked of a dialer", []step{
			{valid("proj-a"), ends(session.End{Kind: session.EndFault, Err: session.ErrOutOfTurn})},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := runningDialer(t, base)
			runScript(t, d, session.Output{}, session.Output{}, tc.steps)
		})
	}
}

// gradient-protocol §4.3: a trigger before Running is queued and its lookup rides on
// the InitAck output.
func TestDialerReauthQueuedDuringHandshake(t *testing.T) {
	d, start := session.NewDialer(dialerCfg)
	runScript(t, d, start, sends(authenticate), []step{
		{session.ServerReauth{}, session.Output{}},
		{recv(initConn(workerID)), needs(session.LookupWorker{WorkerID: workerID})},
		{facts(twoProjs), needs(session.ClaimSession{WorkerID: workerID})},
		{claimed(true), session.Output{
			Send:   []wire.Message{&wire.InitAck{Capabilities: serverCaps, AuthorizedPeers: []string{"proj-a", "proj-b"}}},
			Status: session.Running,
			Result: session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: []string{"proj-a", "proj-b"}},
			Need:   session.LookupWorker{WorkerID: workerID},
		}},
	})
}
