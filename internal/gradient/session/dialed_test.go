package session_test

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

var dialedCfg = session.DialedConfig{WorkerID: workerID, Capabilities: workerCaps}

func dialedReject(code uint16, reason string) session.Output {
	return ends(session.End{Kind: session.EndRejectSent, Code: code, Reason: reason, WorkerID: workerID}, clientReject(code, reason))
}

func TestDialedTransitions(t *testing.T) {
	auth := &wire.Authenticate{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "ta"), tok("proj-b", "tb"), tok("proj-a", "dup")}}
	verify := needs(session.VerifyTokens{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "ta"), tok("proj-b", "tb")}})
	initConnection := sends(&wire.InitConnection{Capabilities: offeredCaps, ID: workerID})
	tests := []struct {
		name  string
		steps []step
	}{
		{"gradient-protocol §4.1 as_dialed: Authenticate, tokens verified, InitConnection, InitAck → Running", []step{
			{recv(auth), verify},
			{valid("proj-a", "proj-b"), initConnection},
			{recv(ack), running(ackResult)},
		}},
		{"gradient-protocol §4.1 as_dialed: another first message → ClientReject 400 expected Authenticate", []step{
			{recv(&wire.AuthChallenge{Peers: []string{"proj-a"}}), dialedReject(400, "expected Authenticate")},
		}},
		{"gradient-protocol §4.1 as_dialed: Authenticate for another worker ID → ClientReject 401 without verifying", []step{
			{recv(&wire.Authenticate{WorkerID: otherID, Tokens: auth.Tokens}), dialedReject(401, "unknown worker id or wrong token")},
		}},
		{"gradient-protocol §4.1 as_dialed: any token failing → ClientReject 401 unknown worker id or wrong token", []step{
			{recv(auth), verify},
			{valid("proj-a"), dialedReject(401, "unknown worker id or wrong token")},
		}},
		{"gradient-protocol §4.1 as_dialed: an Authenticate without tokens proves nothing → ClientReject 401", []step{
			{recv(&wire.Authenticate{WorkerID: workerID}), dialedReject(401, "unknown worker id or wrong token")},
		}},
		{"gradient-protocol §4.5 400: anything but InitAck after InitConnection → ClientReject 400 expected InitAck", []step{
			{recv(auth), verify},
			{valid("proj-a", "proj-b"), initConnection},
			{recv(&wire.AuthChallenge{}), dialedReject(400, "expected InitAck")},
		}},
		{"gradient-protocol §4.1 as_dialed / gradient-server §10.3: Reject in place of InitAck ends the worker, nothing sent", []step{
			{recv(auth), verify},
			{valid("proj-a", "proj-b"), initConnection},
			{recv(serverReject(495, "project has no cache subscribed")), workerEnd(session.EndRejectReceived, 495, "project has no cache subscribed")},
		}},
		{"gradient-server §10.3: Reject as the first message ends the worker, nothing sent", []step{
			{recv(serverReject(403, "worker is deactivated")), workerEnd(session.EndRejectReceived, 403, "worker is deactivated")},
		}},
		{"gradient-protocol §1.4: Error during the handshake ends the worker", []step{
			{recv(&wire.ServerError{Code: 400, Message: "malformed message"}), workerEnd(session.EndRejectReceived, 400, "malformed message")},
		}},
		{"gradient-protocol §4.5: Draining during the handshake ends the worker as drained", []step{
			{recv(&wire.ServerDraining{}), workerEnd(session.EndDrained, 0, "")},
		}},
		{"gradient-protocol §4.3: peers file changes before Running send nothing", []step{
			{session.PeersChanged{}, session.Output{}},
			{recv(auth), verify},
		}},
		{"driver contract: a message while VerifyTokens is pending is a fault", []step{
			{recv(auth), verify},
			{recv(ack), ends(session.End{Kind: session.EndFault, Err: session.ErrOutOfTurn})},
		}},
		{"driver contract: ServerReauth is not for a worker", []step{
			{session.ServerReauth{}, ends(session.End{Kind: session.EndFault, Err: session.ErrNotForRole})},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, start := session.NewDialed(dialedCfg)
			runScript(t, w, start, session.Output{}, tc.steps)
		})
	}
}

func TestDialedRunning(t *testing.T) {
	w, _ := session.NewDialed(dialedCfg)
	for _, ev := range []session.Event{
		recv(&wire.Authenticate{WorkerID: workerID, Tokens: []wire.PeerToken{tok("proj-a", "ta")}}),
		valid("proj-a"), recv(ack),
	} {
		w, _ = w.Step(ev)
	}
	if !w.Running() {
		t.Fatal("dialed worker not running")
	}
	runScript(t, w, session.Output{}, session.Output{}, []step{
		{recv(&wire.AuthUpdate{AuthorizedPeers: []string{"proj-b"}}),
			reauthorized(session.Result{WorkerID: workerID, Capabilities: serverCaps, Authorized: []string{"proj-a", "proj-b"}})},
		// gradient-protocol §4.3: on a server-dialed session a reauth is answered with AuthUpdate;
		// an AuthChallenge is ignored.
		{recv(&wire.AuthChallenge{Peers: []string{"proj-c"}}), session.Output{}},
		{session.PeersChanged{}, sends(&wire.ReauthRequest{})},
		{recv(&wire.NarPush{}), pass()},
		{recv(serverReject(403, "worker is deactivated")), workerEnd(session.EndRejectReceived, 403, "worker is deactivated")},
	})
}
