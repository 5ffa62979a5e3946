package session

import (
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// DialerConfig is the server's side of a session it dialed.
type DialerConfig struct {
	// WorkerID is the registration's (or team worker's) worker ID at the dialed URL.
	WorkerID string
	// Tokens holds one (peer ID, plaintext token) per registration with a stored token at the
	// dialed URL, or (team ID, token) for a team worker. Secret.
	Tokens []wire.PeerToken
	// Federate is the server's proto.federate setting (default off).
	Federate bool
}

type dialerPhase uint8

const (
	dAwaitInit dialerPhase = iota // Authenticate sent, waiting for InitConnection
	dLookup                       // LookupWorker pending
	dClaiming                     // ClaimSession pending
	dRunning
	dEnded
)

// Dialer is the server's role for a worker it dialed (gradient-protocol §4.1 as_dialer):
//
//	send Authenticate --InitConnection{id = worker id}--> LookupWorker --facts--> decision
//	(gradient-protocol §4.4, the sent tokens count as validated) --accept--> ClaimSession --claimed--> InitAck
//
// with no challenge round. An InitConnection under another ID is refused with 400 "dialed
// worker answered as <id>"; a Reject from the worker ends the session (its reason becomes the
// offline reason). Running, any reauth is answered with AuthUpdate alone, or closes the
// session (EndRedial) when an active registration has a token this session did not carry.
type Dialer struct {
	workerID string
	federate bool
	sent     []string // peer IDs whose token went out in Authenticate
	phase    dialerPhase
	need     needKind
	offer    wire.GradientCapabilities
	facts    WorkerFacts
	decision Decision
	result   Result
	queued   bool // a reauth trigger arrived before Running
	end      End
}

// NewDialer starts the role; the output carries Authenticate, the first message of a
// server-dialed session. For a peer ID listed twice in cfg.Tokens the first pair is sent.
func NewDialer(cfg DialerConfig) (Dialer, Output) {
	pairs := selectTokens(cfg.Tokens, nil)
	d := Dialer{workerID: cfg.WorkerID, federate: cfg.Federate, sent: peerIDs(pairs)}
	return d, Output{Send: []wire.Message{&wire.Authenticate{WorkerID: cfg.WorkerID, Tokens: pairs}}}
}

// Step advances the role by one event.
func (d Dialer) Step(ev Event) (Dialer, Output) {
	if d.phase == dEnded {
		return d, ended(d.end)
	}
	if err := checkTurn(d.need, ev); err != nil {
		return d.finish(fault(err))
	}
	d.need = needNone
	switch ev := ev.(type) {
	case Received:
		if m, ok := ev.Msg.(wire.ClientMessage); ok {
			return d.receive(m)
		}
	case FactsAnswer:
		return d.onFacts(ev.Facts)
	case ClaimAnswer:
		return d.onClaim(ev.Claimed)
	case ServerReauth:
		return d.startReauth()
	}
	return d.finish(fault(ErrNotForRole)) // TokensAnswer is caught by checkTurn: never asked
}

func (d Dialer) receive(m wire.ClientMessage) (Dialer, Output) {
	if r, ok := m.(*wire.ClientReject); ok {
		return d.finish(d.endWith(EndRejectReceived, Rejection{r.Code, r.Reason}))
	}
	if d.phase == dRunning {
		return d.receiveRunning(m)
	}
	init, ok := m.(*wire.InitConnection)
	switch {
	case !ok:
		return d.reject(Rejection{CodeUnexpected, ReasonExpectedInitConnection})
	case init.ID != d.workerID:
		return d.reject(Rejection{CodeUnexpected, DialedAnsweredAs(init.ID)})
	}
	d.offer, d.phase = init.Capabilities, dLookup
	return d.ask(needLookup, LookupWorker{WorkerID: d.workerID})
}

func (d Dialer) receiveRunning(m wire.ClientMessage) (Dialer, Output) {
	switch m.(type) {
	case *wire.InitConnection:
		d, out := d.finish(d.endWith(EndViolation, Rejection{CodeUnexpected, MessageUnexpectedInitConnection}))
		out.Send = []wire.Message{violationError(out.End)}
		return d, out
	case *wire.ReauthRequest:
		return d.startReauth()
	case *wire.AuthResponse:
		return d, Output{} // never challenged: nothing to answer, and tokens are never kept
	}
	return d, Output{Status: Pass}
}

func (d Dialer) onFacts(f WorkerFacts) (Dialer, Output) {
	d.facts = f
	if d.phase == dRunning {
		return d.reauthFacts(f)
	}
	dec := d.decide()
	if !dec.Accepted() {
		return d.reject(dec.Reject)
	}
	d.decision, d.phase = dec, dClaiming
	return d.ask(needClaim, ClaimSession{WorkerID: d.workerID})
}

// decide runs gradient-protocol §4.4 with the sent tokens as the validated ones: the worker
// answered InitConnection, so it accepted every one of them.
func (d Dialer) decide() Decision {
	return Authorize(AuthInput{Facts: d.facts, Offered: d.sent, Valid: d.sent})
}

func (d Dialer) onClaim(claimed bool) (Dialer, Output) {
	if !claimed {
		return d.reject(Rejection{CodeAlreadyConnected, ReasonAlreadyConnected})
	}
	d.result = Result{
		WorkerID:     d.workerID,
		Capabilities: Negotiate(d.offer, d.facts, d.federate),
		Authorized:   d.decision.Authorized,
		Failed:       d.decision.Failed,
	}
	d.decision, d.phase = Decision{}, dRunning
	out := Output{Send: []wire.Message{initAck(d.result)}, Status: Running, Result: d.result.clone()}
	if d.queued {
		d.queued = false
		var next Output
		d, next = d.startReauth()
		out.Need = next.Need
	}
	return d, out
}
