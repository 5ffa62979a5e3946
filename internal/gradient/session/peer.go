package session

import (
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// PeerConfig is the worker's side of a session it dials.
type PeerConfig struct {
	WorkerID string
	// Capabilities is what the worker offers; core and cache are cleared (only a server sets
	// them, gradient-protocol §5).
	Capabilities wire.GradientCapabilities
	// Tokens is the worker's peers file (gradient-protocol §4.2).
	Tokens PeerTokens
}

type peerPhase uint8

const (
	pAwaitChallenge peerPhase = iota // InitConnection sent
	pAwaitAck                        // AuthResponse sent
	pRunning
	pEnded
)

// Peer is the worker's role when it dials the server (gradient-protocol §4.1 as_peer):
//
//	send InitConnection --AuthChallenge--> send AuthResponse --InitAck--> Running
//
// A Reject (or, during the handshake, an Error) ends it in any state (gradient-server §10.3),
// Draining ends it too, and an InitAck in place of the challenge is accepted (a cache session
// has no challenge, gradient-protocol §7.1). Anything else during the handshake ends it with
// EndProtocolError and nothing sent. Running, it answers every AuthChallenge from its peers
// file, folds AuthUpdate into its grants, and sends ReauthRequest when PeersChanged.
type Peer struct {
	workerID string
	tokens   PeerTokens
	phase    peerPhase
	// reauthOnAck: the peers file changed after the challenge was answered, so the tokens the
	// server is checking are stale; ask for a reauth as soon as the session runs.
	reauthOnAck bool
	result      Result
	end         End
}

// NewPeer starts the role; the output carries InitConnection.
func NewPeer(cfg PeerConfig) (Peer, Output) {
	p := Peer{workerID: cfg.WorkerID, tokens: cfg.Tokens}
	init := &wire.InitConnection{Capabilities: WorkerOffer(cfg.Capabilities), ID: cfg.WorkerID}
	return p, Output{Send: []wire.Message{init}}
}

// Step advances the role by one event.
func (p Peer) Step(ev Event) (Peer, Output) {
	if p.phase == pEnded {
		return p, ended(p.end)
	}
	if err := checkTurn(needNone, ev); err != nil {
		return p.finish(fault(err))
	}
	switch ev := ev.(type) {
	case Received:
		if m, ok := ev.Msg.(wire.ServerMessage); ok {
			return p.receive(m)
		}
	case PeersChanged:
		return p.peersChanged(ev.Tokens)
	}
	return p.finish(fault(ErrNotForRole))
}

func (p Peer) receive(m wire.ServerMessage) (Peer, Output) {
	if e, ok := workerEnding(m, p.phase == pRunning); ok {
		e.WorkerID = p.workerID
		return p.finish(e)
	}
	switch p.phase {
	case pAwaitChallenge:
		return p.awaitChallenge(m)
	case pAwaitAck:
		ack, ok := m.(*wire.InitAck)
		if !ok {
			return p.protocolError(ReasonExpectedInitAck)
		}
		return p.acked(ack)
	}
	return p.receiveRunning(m)
}

func (p Peer) awaitChallenge(m wire.ServerMessage) (Peer, Output) {
	switch m := m.(type) {
	case *wire.AuthChallenge:
		p.phase = pAwaitAck
		return p, p.answer(m)
	case *wire.InitAck:
		return p.acked(m)
	}
	return p.protocolError(ReasonExpectedAuthChallenge)
}

func (p Peer) acked(ack *wire.InitAck) (Peer, Output) {
	p.result, p.phase = resultFromAck(p.workerID, ack), pRunning
	out := Output{Status: Running, Result: p.result.clone()}
	if p.reauthOnAck {
		p.reauthOnAck = false
		out.Send = []wire.Message{&wire.ReauthRequest{}}
	}
	return p, out
}

func (p Peer) receiveRunning(m wire.ServerMessage) (Peer, Output) {
	switch m := m.(type) {
	case *wire.AuthChallenge:
		return p, p.answer(m)
	case *wire.AuthUpdate:
		p.result = absorbUpdate(p.result, m)
		return p, Output{Status: Reauthorized, Result: p.result.clone()}
	case *wire.InitAck, *wire.Authenticate:
		return p, Output{} // handshake messages out of place: dropped
	}
	return p, Output{Status: Pass}
}

// answer is the AuthResponse for a challenge, from the peers file and its `*` line.
func (p Peer) answer(c *wire.AuthChallenge) Output {
	return Output{Send: []wire.Message{&wire.AuthResponse{Tokens: p.tokens.Answer(c.Peers)}}}
}

func (p Peer) peersChanged(t PeerTokens) (Peer, Output) {
	p.tokens = t
	switch p.phase {
	case pRunning:
		return p, Output{Send: []wire.Message{&wire.ReauthRequest{}}}
	case pAwaitAck:
		p.reauthOnAck = true
	}
	return p, Output{}
}

func (p Peer) protocolError(expected string) (Peer, Output) {
	return p.finish(End{Kind: EndProtocolError, Code: CodeUnexpected, Reason: expected, WorkerID: p.workerID})
}

func (p Peer) finish(e End) (Peer, Output) {
	p.phase, p.end = pEnded, e
	return p, ended(e)
}

// Running reports whether the handshake finished and the session is live.
func (p Peer) Running() bool { return p.phase == pRunning }

// Result is the session's current outcome (zero before Running).
func (p Peer) Result() Result { return p.result.clone() }

// Done reports how the session ended, once it has.
func (p Peer) Done() (End, bool) { return p.end, p.phase == pEnded }

// String keeps the peers file's tokens out of fmt output of the role value.
func (p Peer) String() string {
	return fmt.Sprintf("Peer{WorkerID:%s Tokens:%v}", p.workerID, p.tokens)
}

// GoString keeps %#v from printing the tokens.
func (p Peer) GoString() string { return p.String() }

// workerEnding is what ends either worker role whatever its state: a Reject always
// (gradient-server §10 Q3: workers handle Reject in any state), Draining always, and an Error
// during the handshake (a running session passes Errors to the job loop).
func workerEnding(m wire.ServerMessage, running bool) (End, bool) {
	switch m := m.(type) {
	case *wire.ServerReject:
		return End{Kind: EndRejectReceived, Code: m.Code, Reason: m.Reason}, true
	case *wire.ServerDraining:
		return End{Kind: EndDrained}, true
	case *wire.ServerError:
		if !running {
			return End{Kind: EndRejectReceived, Code: m.Code, Reason: m.Message}, true
		}
	}
	return End{}, false
}
