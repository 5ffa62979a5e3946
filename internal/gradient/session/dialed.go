package session

import "github.com/buildfleet/buildfleet/internal/gradient/wire"

// DialedConfig is the worker's side of a session the server dialed.
type DialedConfig struct {
	WorkerID string
	// Capabilities is what the worker offers; core and cache are cleared
	// (gradient-protocol §5).
	Capabilities wire.GradientCapabilities
}

type dialedPhase uint8

const (
	eAwaitAuthenticate dialedPhase = iota
	eVerifying                     // VerifyTokens pending
	eAwaitAck                      // InitConnection sent
	eRunning
	eEnded
)

// Dialed is the worker's role when the server dials it (gradient-protocol §4.1 as_dialed):
//
//	--Authenticate{own id, tokens}--> VerifyTokens --all valid--> send InitConnection
//	--InitAck--> Running
//
// refusing with ClientReject 400 "expected Authenticate" for another first message, 401
// "unknown worker id or wrong token" for another worker ID, no token at all or any token
// failing, and 400 "expected InitAck" for anything but InitAck after InitConnection. Reject and
// Draining end it in any state (gradient-server §10.3). Running, AuthUpdate grows its grants (a
// server-dialed reauth is AuthUpdate alone, so an AuthChallenge is dropped) and PeersChanged
// sends ReauthRequest.
type Dialed struct {
	workerID string
	offer    wire.GradientCapabilities
	phase    dialedPhase
	need     needKind
	offered  []string
	result   Result
	end      End
}

// NewDialed starts the role. It sends nothing: the server speaks first.
func NewDialed(cfg DialedConfig) (Dialed, Output) {
	return Dialed{workerID: cfg.WorkerID, offer: WorkerOffer(cfg.Capabilities)}, Output{}
}

// Step advances the role by one event.
func (w Dialed) Step(ev Event) (Dialed, Output) {
	if w.phase == eEnded {
		return w, ended(w.end)
	}
	if err := checkTurn(w.need, ev); err != nil {
		return w.finish(fault(err))
	}
	w.need = needNone
	switch ev := ev.(type) {
	case Received:
		if m, ok := ev.Msg.(wire.ServerMessage); ok {
			return w.receive(m)
		}
	case TokensAnswer:
		return w.onVerified(ev.Valid)
	case PeersChanged:
		if w.phase == eRunning {
			return w, Output{Send: []wire.Message{&wire.ReauthRequest{}}}
		}
		return w, Output{}
	}
	return w.finish(fault(ErrNotForRole))
}

func (w Dialed) receive(m wire.ServerMessage) (Dialed, Output) {
	if e, ok := workerEnding(m, w.phase == eRunning); ok {
		e.WorkerID = w.workerID
		return w.finish(e)
	}
	switch w.phase {
	case eAwaitAuthenticate:
		auth, ok := m.(*wire.Authenticate)
		if !ok {
			return w.reject(Rejection{CodeUnexpected, ReasonExpectedAuthenticate})
		}
		return w.authenticate(auth)
	case eAwaitAck:
		ack, ok := m.(*wire.InitAck)
		if !ok {
			return w.reject(Rejection{CodeUnexpected, ReasonExpectedInitAck})
		}
		w.result, w.phase = resultFromAck(w.workerID, ack), eRunning
		return w, Output{Status: Running, Result: w.result.clone()}
	}
	return w.receiveRunning(m)
}

// authenticate checks the ID at once and asks for the tokens (first pair per peer) to be
// verified. An Authenticate without tokens proves nothing about the server and is refused.
func (w Dialed) authenticate(auth *wire.Authenticate) (Dialed, Output) {
	pairs := selectTokens(auth.Tokens, nil)
	if auth.WorkerID != w.workerID || len(pairs) == 0 {
		return w.reject(Rejection{CodeUnauthorized, ReasonWrongWorkerOrToken})
	}
	w.offered, w.phase, w.need = peerIDs(pairs), eVerifying, needVerify
	return w, Output{Need: VerifyTokens{WorkerID: w.workerID, Tokens: pairs}}
}

// onVerified accepts the server only when every token it sent verified.
func (w Dialed) onVerified(valid []string) (Dialed, Output) {
	ok := toSet(valid)
	for _, peer := range w.offered {
		if !ok[peer] {
			return w.reject(Rejection{CodeUnauthorized, ReasonWrongWorkerOrToken})
		}
	}
	w.phase = eAwaitAck
	init := &wire.InitConnection{Capabilities: w.offer, ID: w.workerID}
	return w, Output{Send: []wire.Message{init}}
}

func (w Dialed) receiveRunning(m wire.ServerMessage) (Dialed, Output) {
	switch m := m.(type) {
	case *wire.AuthUpdate:
		w.result = absorbUpdate(w.result, m)
		return w, Output{Status: Reauthorized, Result: w.result.clone()}
	case *wire.AuthChallenge, *wire.InitAck, *wire.Authenticate:
		return w, Output{} // handshake messages out of place: dropped
	}
	return w, Output{Status: Pass}
}

// reject refuses the server: ClientMessage::Reject{code, reason}, then close.
func (w Dialed) reject(r Rejection) (Dialed, Output) {
	w, out := w.finish(End{Kind: EndRejectSent, Code: r.Code, Reason: r.Reason, WorkerID: w.workerID})
	out.Send = []wire.Message{&wire.ClientReject{Code: r.Code, Reason: r.Reason}}
	return w, out
}

func (w Dialed) finish(e End) (Dialed, Output) {
	w.phase, w.need, w.end = eEnded, needNone, e
	return w, ended(e)
}

// Running reports whether the handshake finished and the session is live.
func (w Dialed) Running() bool { return w.phase == eRunning }

// Result is the session's current outcome (zero before Running).
func (w Dialed) Result() Result { return w.result.clone() }

// Done reports how the session ended, once it has.
func (w Dialed) Done() (End, bool) { return w.end, w.phase == eEnded }
