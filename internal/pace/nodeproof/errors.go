package nodeproof

import (
	"errors"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Server-side outcomes a node handler branches on; RefusalFor gives the
// reply for each.
var (
	// ErrNoCluster: this node runs no consensus, so it has no roster to
	// prove against (pace-node §8.3: no-cluster).
	ErrNoCluster = errors.New("this node runs no consensus")
	// ErrUnchallenged: PROVE-NODE with no outstanding challenge on the
	// connection (none asked, or already spent by an earlier proof).
	ErrUnchallenged = errors.New("no outstanding challenge on this connection")
	// ErrMalformed: a body that does not match the verb's grammar.
	ErrMalformed = errors.New("malformed node-proof body")
	// ErrProofRejected: the proof's signature does not verify under the
	// key it presents, or the key proves nothing (a small-order point).
	ErrProofRejected = errors.New("the proof's signature does not verify")
	// ErrAlreadyProven: one proof per connection.
	ErrAlreadyProven = errors.New("this connection is already proven; one proof per connection")
	// ErrRosterNotApplied: this node has not applied a roster yet.
	ErrRosterNotApplied = errors.New("this node has not applied its roster yet")
	// ErrKeyRevoked: the cluster revoked the presented or proven key.
	ErrKeyRevoked = errors.New("the cluster revoked this node key")
	// ErrKeyUnknown: the roster records no such key for that node id.
	ErrKeyUnknown = errors.New("the roster records no such key for this node id")
	// ErrNotProven: the connection completed no node proof.
	ErrNotProven = errors.New("this connection has not proven a node identity")
	// ErrNoRandom: the random source failed while drawing a challenge.
	ErrNoRandom = errors.New("the random source failed")
)

// Client-side and sealing outcomes.
var (
	// ErrServerSignature: the challenge reply is not signed by the key it
	// presents.
	ErrServerSignature = errors.New("the server's challenge signature does not verify")
	// ErrServerRevoked: the server presents a key the cluster revoked.
	ErrServerRevoked = errors.New("the server's key is revoked")
	// ErrServerNotVoter: the roster records no voter with that id and key.
	ErrServerNotVoter = errors.New("the server's key is not a live voter's")
	// ErrLowOrderEphemeral: the peer's ephemeral key gives no shared secret.
	ErrLowOrderEphemeral = errors.New("the peer's ephemeral key is a low-order point")
	// ErrBadTag: a sealed frame's tag does not verify.
	ErrBadTag = errors.New("sealed frame tag does not verify")
)

// refusalCodes maps each server-side sentinel to the code it answers with.
var refusalCodes = []struct {
	err  error
	code wire.Code
}{
	{ErrNoCluster, wire.CodeNoCluster},
	{ErrUnchallenged, wire.CodeNodeProofUnchallenged},
	{ErrMalformed, wire.CodeMalformedFrame},
	{ErrProofRejected, wire.CodeNodeProofRejected},
	{ErrAlreadyProven, wire.CodeNodeProofRejected},
	{ErrRosterNotApplied, wire.CodeRosterNotYetApplied},
	{ErrKeyRevoked, wire.CodeNodeKeyRevoked},
	{ErrKeyUnknown, wire.CodeNodeKeyUnknown},
	{ErrNotProven, wire.CodeNodeIdentityRequired},
	// A failed random source is this node's fault, not the prover's; no
	// code says so, and rejected at least makes the prover retry elsewhere.
	{ErrNoRandom, wire.CodeNodeProofRejected},
}

// RefusalFor is the Error reply for an error from Session's methods, its
// message the error's own sentence. ok is false for an error this package
// did not return.
func RefusalFor(err error) (r wire.Refusal, ok bool) {
	for _, rc := range refusalCodes {
		if errors.Is(err, rc.err) {
			return wire.Refusal{Code: rc.code, Message: err.Error()}, true
		}
	}
	return wire.Refusal{}, false
}

// isAny reports whether err matches any of targets.
func isAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
