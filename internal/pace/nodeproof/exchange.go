package nodeproof

import (
	"crypto/ed25519"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// Signer is an identity key: *identity.Key in a node, a deterministic key
// in tests.
type Signer interface {
	Public() ed25519.PublicKey
	Sign(label string, fields ...[]byte) []byte
}

// Peer is a proven identity: a node id and the identity key it proved.
type Peer struct {
	ID  string
	Key ed25519.PublicKey
}

// exchange is the transcript both signatures cover, in wire order: the
// client's challenge, then the server's answer.
type exchange struct {
	challenge verbs.NodeChallengeRequest
	answer    verbs.NodeChallengeOk
}

// challengeFields are what sigS covers: both halves of NODE-CHALLENGE.
func (x *exchange) challengeFields() [][]byte {
	return [][]byte{
		x.challenge.Nonce[:], x.challenge.Ephemeral[:],
		[]byte(x.answer.ServerID), x.answer.ServerKey[:], x.answer.Nonce[:], x.answer.Ephemeral[:],
	}
}

// proofFields are what sigC covers: everything so far, sigS included, and
// the prover's own id and key.
func (x *exchange) proofFields(clientID string, clientKey []byte) [][]byte {
	return append(x.challengeFields(), x.answer.Signature[:], []byte(clientID), clientKey)
}

// transcript is what the session keys are bound to.
func (x *exchange) transcript(clientID string) Transcript {
	return Transcript{
		ClientNonce: x.challenge.Nonce, ServerNonce: x.answer.Nonce,
		ClientEphemeral: x.challenge.Ephemeral, ServerEphemeral: x.answer.Ephemeral,
		ClientID: clientID, ServerID: x.answer.ServerID,
	}
}
