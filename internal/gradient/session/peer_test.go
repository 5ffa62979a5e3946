package session_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

var peersFile = session.NewPeerTokens([]wire.PeerToken{tok("proj-a", "ta"), tok("proj-a", "later"), tok("*", "wild"), tok("*", "wild2")})

var peerCfg = session.PeerConfig{WorkerID: workerID, Capabilities: workerCaps, Tokens: peersFile}

var ack = &wire.InitAck{Capabilities: serverCaps, AuthorizedPeers: []string{"proj-a"}, FailedPeers: []wire.FailedPeer{failed("proj-b", "invalid token")}}

var ackResult = session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: []string{"proj-a"}, Failed: []wire.FailedPeer{failed("proj-b", "invalid token")}}

func workerEnd(kind session.EndKind, code uint16, reason string) session.Output {
	return ends(session.End{Kind: kind, Code: code, Reason: reason, WorkerID: workerID})
}

func TestPeerTransitions(t *testing.T) {
	challenge := &wire.AuthChallenge{Peers: []string{"proj-a", "proj-b", "proj-a"}}
	// proj-a from its own line (first pair), proj-b from the `*` line, each once.
	response := &wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "ta"), tok("proj-b", "wild")}}
	tests := []struct {
		name  string
		cfg   session.PeerConfig
		steps []step
	}{
		{"gradient-protocol §4.1 as_peer: AuthChallenge answered from the peers file and its * line, InitAck → Running", peerCfg, []step{
			{recv(challenge), sends(response)},
			{recv(ack), running(ackResult)},
		}},
		{"gradient-protocol §4.2 peers file without * line: unheld peers are left out of AuthResponse", session.PeerConfig{WorkerID: workerID,
			Tokens: session.NewPeerTokens([]wire.PeerToken{tok("proj-b", "tb")})}, []step{
			{recv(challenge), sends(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-b", "tb")}})},
		}},
		{"gradient-protocol §4.1 / gradient-server §10.8: Reject in place of AuthChallenge ends the peer", peerCfg, []step{
			{recv(serverReject(403, "unknown worker")), workerEnd(session.EndRejectReceived, 403, "unknown worker")},
		}},
		{"gradient-protocol §4.1: Reject in place of InitAck ends the peer", peerCfg, []step{
			{recv(challenge), sends(response)},
			{recv(serverReject(401, "no valid peer tokens provided")), workerEnd(session.EndRejectReceived, 401, "no valid peer tokens provided")},
		}},
		{"gradient-server §10.3: Reject after InitAck (older servers' 496) ends the peer", peerCfg, []step{
			{recv(challenge), sends(response)},
			{recv(ack), running(ackResult)},
			{recv(serverReject(496, "worker already connected")), workerEnd(session.EndRejectReceived, 496, "worker already connected")},
		}},
		{"gradient-protocol §1.4: Error during the handshake ends the peer", peerCfg, []step{
			{recv(&wire.ServerError{Code: 400, Message: "malformed message"}), workerEnd(session.EndRejectReceived, 400, "malformed message")},
		}},
		{"gradient-protocol §4.5: Draining during the handshake ends the peer as drained", peerCfg, []step{
			{recv(challenge), sends(response)},
			{recv(&wire.ServerDraining{}), workerEnd(session.EndDrained, 0, "")},
		}},
		{"gradient-protocol §7.1: InitAck with no challenge (cache session) → Running", peerCfg, []step{
			{recv(&wire.InitAck{Capabilities: session.CacheSessionCapabilities()}),
				running(session.Result{WorkerID: workerID, Capabilities: session.CacheSessionCapabilities()})},
		}},
		{"gradient-protocol §4.1 as_peer: anything else instead of AuthChallenge → protocol error, nothing sent", peerCfg, []step{
			{recv(&wire.AuthUpdate{}), workerEnd(session.EndProtocolError, 400, "expected AuthChallenge")},
		}},
		{"gradient-protocol §4.1 as_peer: anything else instead of InitAck → protocol error, nothing sent", peerCfg, []step{
			{recv(challenge), sends(response)},
			{recv(challenge), workerEnd(session.EndProtocolError, 400, "expected InitAck")},
		}},
		{"gradient-protocol §4.3: peers file changed before the challenge: the new file answers it", peerCfg, []step{
			{session.PeersChanged{Tokens: session.NewPeerTokens([]wire.PeerToken{tok("proj-a", "new")})}, session.Output{}},
			{recv(challenge), sends(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "new")}})},
		}},
		{"gradient-protocol §4.3: peers file changed after the answer: ReauthRequest goes out with Running", peerCfg, []step{
			{recv(challenge), sends(response)},
			{session.PeersChanged{Tokens: session.NewPeerTokens([]wire.PeerToken{tok("proj-b", "tb")})}, session.Output{}},
			{recv(ack), running(ackResult, &wire.ReauthRequest{})},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, start := session.NewPeer(tc.cfg)
			want := sends(&wire.InitConnection{Capabilities: session.WorkerOffer(tc.cfg.Capabilities), ID: workerID})
			runScript(t, p, start, want, tc.steps)
		})
	}
}

func runningPeer(t *testing.T) session.Peer {
	t.Helper()
	p, _ := session.NewPeer(peerCfg)
	p, _ = p.Step(recv(&wire.AuthChallenge{Peers: []string{"proj-a"}}))
	p, _ = p.Step(recv(ack))
	if !p.Running() {
		t.Fatal("peer not running")
	}
	return p
}

func TestPeerRunning(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"gradient-protocol §4.3: a reauth AuthChallenge is answered; AuthUpdate grows the grants (union)", []step{
			{recv(&wire.AuthChallenge{Peers: []string{"proj-c"}}), sends(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-c", "wild")}})},
			{recv(&wire.AuthUpdate{AuthorizedPeers: []string{"proj-c"}, FailedPeers: []wire.FailedPeer{failed("proj-a", "invalid token"), failed("proj-d", "no token provided")}}),
				reauthorized(session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: []string{"proj-a", "proj-c"},
					Failed: []wire.FailedPeer{failed("proj-d", "no token provided")}})},
		}},
		{"gradient-protocol §4.3: peers file changed while running → ReauthRequest", []step{
			{session.PeersChanged{Tokens: session.NewPeerTokens(nil)}, sends(&wire.ReauthRequest{})},
		}},
		{"gradient-server §6: job messages and Errors pass to the job loop; stray handshake messages are dropped", []step{
			{recv(&wire.AssignJob{}), pass()},
			{recv(&wire.ServerError{Code: 400, Message: "unexpected InitConnection"}), pass()},
			{recv(ack), session.Output{}},
			{recv(&wire.Authenticate{}), session.Output{}},
		}},
		{"gradient-protocol §3.2 Draining while running ends the session, never the process", []step{
			{recv(&wire.ServerDraining{}), workerEnd(session.EndDrained, 0, "")},
		}},
		{"gradient-protocol §4.3: 403 worker is deactivated while running ends the session", []step{
			{recv(serverReject(403, "worker is deactivated")), workerEnd(session.EndRejectReceived, 403, "worker is deactivated")},
		}},
		{"driver contract: answers and server triggers are not for a peer", []step{
			{facts(twoProjs), ends(session.End{Kind: session.EndFault, Err: session.ErrOutOfTurn})},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runScript(t, runningPeer(t), session.Output{}, session.Output{}, tc.steps)
		})
	}
	t.Run("driver contract: ServerReauth and client messages are not for a peer", func(t *testing.T) {
		for _, ev := range []session.Event{session.ServerReauth{}, recv(&wire.ReauthRequest{})} {
			_, out := runningPeer(t).Step(ev)
			if out.Status != session.Ended || out.End.Kind != session.EndFault {
				t.Fatalf("%T: got %v, want a fault", ev, out.End)
			}
		}
	})
}

// gradient-protocol §4.2, spec "never log tokens": the role, its peers file and a VerifyTokens
// print peer IDs only.
func TestSecretsStayOutOfFormatting(t *testing.T) {
	file := session.NewPeerTokens([]wire.PeerToken{tok("proj-a", "s3cr3t-a"), tok("*", "s3cr3t-w")})
	p, _ := session.NewPeer(session.PeerConfig{WorkerID: workerID, Tokens: file})
	need := session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "s3cr3t-a")}}
	for _, s := range []string{
		fmt.Sprint(p), fmt.Sprintf("%+v", p), fmt.Sprintf("%#v", p),
		fmt.Sprint(file), fmt.Sprintf("%#v", file),
		fmt.Sprint(need), fmt.Sprintf("%+v", need), fmt.Sprintf("%#v", need),
	} {
		if strings.Contains(s, "s3cr3t") {
			t.Errorf("a token leaked: %s", s)
		}
		if !strings.Contains(s, "proj-a") {
			t.Errorf("peer IDs missing: %s", s)
		}
	}
}
