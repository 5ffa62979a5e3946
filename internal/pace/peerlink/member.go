package peerlink

import (
	"crypto/ed25519"
	"fmt"
	"io"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
)

// Member is this node's side of every consensus link, accepting and
// dialling alike. Its fields are read on every handshake and message, and
// it may be shared by any number of links at once.
type Member struct {
	// ID and Key are this member's identity: verdicts and proofs are
	// signed with Key.
	ID  string
	Key Signer
	// Roster holds the keys of the members this one proves (and its own,
	// re-checked on every message too).
	Roster Roster
	// Random supplies nonces and ephemeral keys (crypto/rand.Reader); it
	// must be safe for concurrent use when links handshake concurrently.
	Random io.Reader
	// MaxMessage caps a Raft message either way; 0 means DefaultMaxMessage.
	MaxMessage uint32
	// CheckSender, if set, is asked about every message received, after its
	// tag and the roster: peer is the proven member. An error wrapping
	// ErrFrameUnreadable ends the link as unreadable; any other error ends
	// it as a message from the wrong sender (ErrFrameSender).
	CheckSender SenderCheck
}

// SenderCheck reads the sender out of a received message (a raftpb
// message's From, in consensus) and refuses one that is not peer.
type SenderCheck func(peer string, message []byte) error

// check refuses a Member that could not complete a handshake.
func (m *Member) check() error {
	switch {
	case m.ID == "":
		return fmt.Errorf("%w: no member id", ErrBadConfig)
	case m.Key == nil:
		return fmt.Errorf("%w: no identity key", ErrBadConfig)
	case m.Roster == nil:
		return fmt.Errorf("%w: no roster", ErrBadConfig)
	case m.Random == nil:
		return fmt.Errorf("%w: no random source", ErrBadConfig)
	}
	return nil
}

// maxMessage is the cap in force.
func (m *Member) maxMessage() uint32 { return messageCap(m.MaxMessage) }

// fresh draws a nonce and an ephemeral key.
func (m *Member) fresh() ([NonceLen]byte, *nodeproof.Ephemeral, error) {
	var nonce [NonceLen]byte
	if _, err := io.ReadFull(m.Random, nonce[:]); err != nil {
		return nonce, nil, fmt.Errorf("%w: %w", nodeproof.ErrNoRandom, err)
	}
	eph, err := nodeproof.NewEphemeral(m.Random)
	return nonce, eph, err
}

// verifies checks a signature under a recorded key. A key that is not a
// canonical point of large order proves nothing (a small-order key would
// verify a forgery), so it never verifies.
func verifies(key ed25519.PublicKey, sig []byte, label string, fields [][]byte) bool {
	return edkey.Validate(key) == nil && identity.Verify(key, sig, label, fields...)
}

// sessionFor derives the keys of an accepted handshake and builds the
// session of one end.
func (m *Member) sessionFor(role Role, x *transcript, secret []byte, peer Peer, acceptor string) (*Session, error) {
	keys, err := nodeproof.DeriveSessionKeys(SessionLabel, secret, x.keys(acceptor))
	if err != nil {
		return nil, err
	}
	sealer := keys.ServerSealer()
	if role == RoleDialler {
		sealer = keys.ClientSealer()
	}
	s := &Session{member: m, role: role, peer: peer, dir: x.p.dir, sealer: sealer,
		self: Peer{ID: m.ID, Key: m.Key.Public()}}
	return s, nil
}
