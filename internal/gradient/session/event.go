package session

import (
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Sentinel errors of an End with Kind EndFault: the driver broke the stepping contract. They
// never come from the other side, so a driver can treat them as bugs.
var (
	// ErrOutOfTurn: a Need was pending and the event was not its answer, or an answer arrived
	// that nothing asked for.
	ErrOutOfTurn = errors.New("session: event out of turn")
	// ErrNotForRole: the event does not belong to this role (a trigger of the other side, or a
	// message travelling in the wrong direction, or a nil message).
	ErrNotForRole = errors.New("session: event not accepted by this role")
)

// Event is what a role is stepped with: a received message, the answer to a Need, or a
// trigger from the process that owns the session.
type Event interface{ isEvent() }

// Received carries one decoded frame from the other side: a wire.ClientMessage for the
// server roles, a wire.ServerMessage for the worker roles.
type Received struct{ Msg wire.Message }

// FactsAnswer answers LookupWorker with what the server knows about the worker ID.
type FactsAnswer struct{ Facts WorkerFacts }

// TokensAnswer answers VerifyTokens: the peer IDs whose token verified. IDs that were not
// asked about are ignored; an asked ID that is missing counts as a failed token.
type TokensAnswer struct{ Valid []string }

// ClaimAnswer answers ClaimSession: Claimed is false when another live session already holds
// the worker ID (496).
type ClaimAnswer struct{ Claimed bool }

// ServerReauth is the server's reauth trigger on a running session (gradient-protocol §4.3):
// a peer newly registered the worker, or a project it serves subscribed to a cache. Server
// roles only.
type ServerReauth struct{}

// PeersChanged is the worker's reauth trigger (gradient-protocol §4.3): its peers file
// changed. Tokens replaces the token map; a running session sends ReauthRequest. Worker roles
// only.
type PeersChanged struct{ Tokens PeerTokens }

func (Received) isEvent()     {}
func (FactsAnswer) isEvent()  {}
func (TokensAnswer) isEvent() {}
func (ClaimAnswer) isEvent()  {}
func (ServerReauth) isEvent() {}
func (PeersChanged) isEvent() {}

// Need is a fact a role asks the driver for. The driver must step the matching answer next.
type Need interface{ isNeed() }

// LookupWorker asks for the worker's registrations, team identity and cache subscriptions
// (answer: FactsAnswer). Asked by Authority after InitConnection and by both server roles at
// the start of every reauth; asked by Dialer after the dialed worker's InitConnection.
type LookupWorker struct{ WorkerID string }

// VerifyTokens asks which tokens verify (answer: TokensAnswer). On the server the hashes are
// the registrations' (or the team worker's) for WorkerID; on a dialed worker they are the
// accepted server tokens file. Tokens holds the first pair per peer ID only and, on the
// server, challenged peers only. Secret: String redacts the tokens.
type VerifyTokens struct {
	WorkerID string
	Tokens   []wire.PeerToken
}

// ClaimSession asks the driver to claim the one live-session slot of WorkerID atomically
// (answer: ClaimAnswer). Asked once, after authorization accepted and before InitAck (the Go
// choice of gradient-protocol §4.1 and gradient-server §10.3). The driver releases the slot
// when the session ends.
type ClaimSession struct{ WorkerID string }

func (LookupWorker) isNeed() {}
func (VerifyTokens) isNeed() {}
func (ClaimSession) isNeed() {}

// String names the worker and the peers but never the tokens.
func (v VerifyTokens) String() string {
	return fmt.Sprintf("VerifyTokens{WorkerID:%s Tokens:%v}", v.WorkerID, v.Tokens)
}

// GoString keeps %#v from printing the tokens.
func (v VerifyTokens) GoString() string { return v.String() }

// answerKind names which Need an event answers; needNone for everything else.
func answerKind(ev Event) needKind {
	switch ev.(type) {
	case FactsAnswer:
		return needLookup
	case TokensAnswer:
		return needVerify
	case ClaimAnswer:
		return needClaim
	}
	return needNone
}

type needKind uint8

const (
	needNone needKind = iota
	needLookup
	needVerify
	needClaim
)

// checkTurn enforces the stepping contract: a pending need takes only its own answer, and an
// answer comes only when asked for.
func checkTurn(pending needKind, ev Event) error {
	if got := answerKind(ev); got != pending {
		return fmt.Errorf("%w: pending %s, got %T", ErrOutOfTurn, pending, ev)
	}
	return nil
}

func (k needKind) String() string {
	return [...]string{"nothing", "LookupWorker", "VerifyTokens", "ClaimSession"}[k]
}
