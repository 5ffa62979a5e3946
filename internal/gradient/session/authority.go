package session

import (
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// AuthorityConfig is the server's side of a worker-dialed session.
type AuthorityConfig struct {
	// AcceptInbound is false when inbound connections are disabled (proto.discoverable=false):
	// every worker is refused with 403 "server is not accepting connections".
	AcceptInbound bool
	// Federate is the server's proto.federate setting (default off).
	Federate bool
}

type authorityPhase uint8

const (
	aOpening    authorityPhase = iota // waiting for InitConnection
	aLookup                           // LookupWorker pending
	aChallenged                       // AuthChallenge sent, waiting for AuthResponse
	aVerifying                        // VerifyTokens pending
	aClaiming                         // ClaimSession pending
	aRunning                          // InitAck sent; reauth rounds happen here
	aEnded
)

// reauthStage tracks a server reauth round on a running session (gradient-protocol §4.3).
type reauthStage uint8

const (
	reauthIdle       reauthStage = iota
	reauthLookup                 // LookupWorker pending
	reauthChallenged             // AuthChallenge sent (worker-dialed only)
	reauthVerifying              // VerifyTokens pending
)

// Authority is the server's role for a worker that dialed in (gradient-protocol §4.1
// as_authority):
//
//	Opening --InitConnection--> LookupWorker --facts--> AuthChallenge --AuthResponse-->
//	VerifyTokens --valid--> decision (gradient-protocol §4.4) --accept--> ClaimSession --claimed--> InitAck, Running
//
// refusing with 400 for a wrong message, 403 when inbound is disabled or the ID has no active
// identity (right after the lookup, gradient-server §10.8), 401/495 from the decision and 496
// when the claim fails. Running, it answers ReauthRequest and ServerReauth with a challenge round
// ending in AuthUpdate, and ends the session on an InitConnection (Error 400, EndViolation).
type Authority struct {
	cfg        AuthorityConfig
	phase      authorityPhase
	need       needKind
	workerID   string
	offer      wire.GradientCapabilities
	facts      WorkerFacts
	challenged []string
	offered    []string
	decision   Decision
	result     Result
	reauth     reauthStage
	queued     bool // a reauth trigger arrived while a round (or the handshake) was in flight
	end        End
}

// NewAuthority starts the role. It sends nothing: the worker speaks first.
func NewAuthority(cfg AuthorityConfig) (Authority, Output) {
	return Authority{cfg: cfg}, Output{}
}

// Step advances the role by one event.
func (a Authority) Step(ev Event) (Authority, Output) {
	if a.phase == aEnded {
		return a, ended(a.end)
	}
	if err := checkTurn(a.need, ev); err != nil {
		return a.finish(fault(err))
	}
	a.need = needNone
	switch ev := ev.(type) {
	case Received:
		if m, ok := ev.Msg.(wire.ClientMessage); ok {
			return a.receive(m)
		}
	case FactsAnswer:
		return a.onFacts(ev.Facts)
	case TokensAnswer:
		return a.onVerified(ev.Valid)
	case ClaimAnswer:
		return a.onClaim(ev.Claimed)
	case ServerReauth:
		return a.startReauth()
	}
	return a.finish(fault(ErrNotForRole))
}

func (a Authority) receive(m wire.ClientMessage) (Authority, Output) {
	if r, ok := m.(*wire.ClientReject); ok {
		return a.finish(a.endWith(EndRejectReceived, Rejection{r.Code, r.Reason}))
	}
	switch a.phase {
	case aOpening:
		init, ok := m.(*wire.InitConnection)
		if !ok {
			return a.reject(Rejection{CodeUnexpected, ReasonExpectedInitConnection})
		}
		a.workerID, a.offer, a.phase = init.ID, init.Capabilities, aLookup
		return a.ask(needLookup, LookupWorker{WorkerID: init.ID})
	case aChallenged:
		resp, ok := m.(*wire.AuthResponse)
		if !ok {
			return a.reject(Rejection{CodeUnexpected, ReasonExpectedAuthResponse})
		}
		return a.verify(resp.Tokens)
	}
	return a.receiveRunning(m)
}

func (a Authority) receiveRunning(m wire.ClientMessage) (Authority, Output) {
	switch m := m.(type) {
	case *wire.InitConnection:
		a, out := a.finish(a.endWith(EndViolation, Rejection{CodeUnexpected, MessageUnexpectedInitConnection}))
		out.Send = []wire.Message{violationError(out.End)}
		return a, out
	case *wire.ReauthRequest:
		return a.startReauth()
	case *wire.AuthResponse:
		if a.reauth == reauthChallenged {
			return a.verify(m.Tokens)
		}
		return a, Output{} // unsolicited: nothing to answer, and tokens are never kept
	}
	return a, Output{Status: Pass}
}

func (a Authority) onFacts(f WorkerFacts) (Authority, Output) {
	a.facts = f
	if a.phase == aRunning {
		return a.reauthFacts(f)
	}
	if !a.cfg.AcceptInbound {
		return a.reject(Rejection{CodeForbidden, ReasonNotAccepting})
	}
	if r, ok := Precheck(f); !ok {
		return a.reject(r)
	}
	a.challenged, a.phase = f.Challenge(), aChallenged
	return a, Output{Send: []wire.Message{&wire.AuthChallenge{Peers: slices.Clone(a.challenged)}}}
}

// verify keeps the first pair per challenged peer and asks for them to be checked; with no
// pair left there is nothing to check and the decision runs at once.
func (a Authority) verify(tokens []wire.PeerToken) (Authority, Output) {
	pairs := selectTokens(tokens, a.challenged)
	a.offered = peerIDs(pairs)
	if a.phase == aRunning {
		a.reauth = reauthVerifying
	} else {
		a.phase = aVerifying
	}
	if len(pairs) == 0 {
		return a.onVerified(nil)
	}
	return a.ask(needVerify, VerifyTokens{WorkerID: a.workerID, Tokens: pairs})
}

func (a Authority) onVerified(valid []string) (Authority, Output) {
	d := Authorize(AuthInput{Facts: a.facts, Offered: a.offered, Valid: valid})
	if a.phase == aRunning {
		return a.reauthDecided(d)
	}
	if !d.Accepted() {
		return a.reject(d.Reject)
	}
	a.decision, a.phase = d, aClaiming
	return a.ask(needClaim, ClaimSession{WorkerID: a.workerID})
}

func (a Authority) onClaim(claimed bool) (Authority, Output) {
	if !claimed {
		return a.reject(Rejection{CodeAlreadyConnected, ReasonAlreadyConnected})
	}
	a.result = Result{
		WorkerID:     a.workerID,
		Capabilities: Negotiate(a.offer, a.facts, a.cfg.Federate),
		Authorized:   a.decision.Authorized,
		Failed:       a.decision.Failed,
	}
	a.decision, a.phase = Decision{}, aRunning
	out := Output{Send: []wire.Message{initAck(a.result)}, Status: Running, Result: a.result.clone()}
	return a.runQueued(out)
}
