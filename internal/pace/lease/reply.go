package lease

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// ErrReplyUnauthenticated: a compile reply that does not carry a valid
// signature by the granted worker's key. The client compiles locally.
var ErrReplyUnauthenticated = errors.New("compile reply unauthenticated")

// SignReply is the worker's signature on a compile reply (pace-wire §1.15.3):
// over fieldlist[LabelCompileReply, correlation, SHA-256(objectField)], where
// objectField is the reply's object field exactly as sent (enveloped; empty
// when the compile failed).
func SignReply(s Signer, correlation string, objectField []byte) []byte {
	digest := sha256.Sum256(objectField)
	return s.Sign(wire.LabelCompileReply, []byte(correlation), digest[:])
}

// VerifyReply checks a compile reply's signature under the grant's worker
// key, before the client opens the envelope. correlation is the one the
// client computed for its own request, so a reply to another request fails
// here too. An empty key, an empty signature or a bad one is
// ErrReplyUnauthenticated.
func VerifyReply(workerKey ed25519.PublicKey, correlation string, objectField, signature []byte) error {
	switch {
	case len(workerKey) != ed25519.PublicKeySize:
		return fmt.Errorf("%w: the grant carries a worker key of %d bytes", ErrReplyUnauthenticated, len(workerKey))
	case len(signature) != ed25519.SignatureSize:
		return fmt.Errorf("%w: the reply carries a signature of %d bytes", ErrReplyUnauthenticated, len(signature))
	}
	digest := sha256.Sum256(objectField)
	msg := wire.AppendLabelledMessage(make([]byte, 0, 64+len(correlation)+len(digest)),
		wire.LabelCompileReply, []byte(correlation), digest[:])
	if !ed25519.Verify(workerKey, msg, signature) {
		return fmt.Errorf("%w: the signature does not verify under the granted worker's key", ErrReplyUnauthenticated)
	}
	return nil
}
