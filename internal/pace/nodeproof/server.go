package nodeproof

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Server is the scheduler's side of the node proof: one per node, shared
// by every connection's Session. Its fields are read on every call, so the
// roster it points at may change underneath (it must be safe for
// concurrent use, as lease.Roster says).
type Server struct {
	// ID and Key are this node's identity; the challenge reply is signed
	// with Key.
	ID  string
	Key Signer
	// Roster is the fleet state this node's consensus applied, asked on
	// every proof and every Proven. Nil means the node runs no consensus:
	// both verbs are answered no-cluster.
	Roster lease.Roster
	// Random supplies nonces and ephemeral keys (crypto/rand.Reader).
	Random io.Reader
	// Counters receives the proof counters; nil discards them.
	Counters *Counters
}

// NewSession starts the proof state of one connection.
func (s *Server) NewSession() *Session { return &Session{srv: s} }

func (s *Server) counters() *Counters {
	if s.Counters == nil {
		return &discard
	}
	return s.Counters
}

// Session is one connection's proof state: the outstanding challenge, the
// proven peer, and whether a revoked key was presented. A node handler
// keeps it with the connection and calls it from the connection's
// goroutine only; it is not safe for concurrent use.
type Session struct {
	srv     *Server
	pending *pendingChallenge
	peer    Peer
	proven  bool
	revoked bool // a revoked key was presented: outranks every route
}

// pendingChallenge is the challenge a PROVE-NODE must answer: the
// exchange so far and the X25519 secret (the ephemeral scalar itself is
// not kept).
type pendingChallenge struct {
	x      exchange
	secret []byte
}

// Challenge answers NODE-CHALLENGE, given its fields: the Ok payload, or
// an error for RefusalFor. Any earlier outstanding challenge is dropped
// first, so asking again redraws it.
func (ss *Session) Challenge(fields [][]byte) ([]byte, error) {
	ss.pending = nil
	payload, err := ss.challenge(fields)
	// A challenge is not a proof: only a malformed body and a second proof
	// on a proven connection are counted here.
	switch c := ss.srv.counters(); {
	case errors.Is(err, ErrMalformed):
		c.ProofsMalformed.Add(1)
	case errors.Is(err, ErrAlreadyProven):
		c.ProofsRejected.Add(1)
	}
	return payload, err
}

func (ss *Session) challenge(fields [][]byte) ([]byte, error) {
	switch {
	case ss.srv.Roster == nil:
		return nil, ErrNoCluster
	case ss.revoked:
		return nil, fmt.Errorf("%w: this connection presented it", ErrKeyRevoked)
	case ss.proven:
		return nil, ErrAlreadyProven
	}
	req, err := verbs.ParseNodeChallenge(fields)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	var nonce [NonceLen]byte
	if _, err := io.ReadFull(ss.srv.Random, nonce[:]); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoRandom, err)
	}
	eph, err := NewEphemeral(ss.srv.Random)
	if err != nil {
		return nil, err
	}
	secret, err := eph.SharedSecret(req.Ephemeral)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	x := exchange{challenge: req, answer: verbs.NodeChallengeOk{
		ServerID: ss.srv.ID, Nonce: nonce, Ephemeral: eph.Public(),
	}}
	copy(x.answer.ServerKey[:], ss.srv.Key.Public())
	copy(x.answer.Signature[:], ss.srv.Key.Sign(wire.LabelNodeChallenge, x.challengeFields()...))
	ss.pending = &pendingChallenge{x: x, secret: secret}
	return x.answer.Append(nil), nil
}

// Prove answers PROVE-NODE, given its fields. Accepted, it returns the
// proven peer and the Sealer to install before the (empty) Ok reply is
// written: that reply is the first sealed frame. Refused, the error is for
// RefusalFor. The outstanding challenge is spent either way.
func (ss *Session) Prove(fields [][]byte) (*Sealer, Peer, error) {
	sealer, peer, err := ss.prove(fields)
	if c := ss.srv.counters().countFor(err); c != nil {
		c.Add(1)
	}
	return sealer, peer, err
}

func (ss *Session) prove(fields [][]byte) (*Sealer, Peer, error) {
	p := ss.pending
	ss.pending = nil
	switch {
	case ss.srv.Roster == nil:
		return nil, Peer{}, ErrNoCluster
	case ss.proven:
		return nil, Peer{}, fmt.Errorf("%w: this connection is already proven", ErrUnchallenged)
	case p == nil:
		return nil, Peer{}, ErrUnchallenged
	}
	req, err := verbs.ParseProveNode(fields)
	if err != nil {
		return nil, Peer{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	peer := Peer{ID: req.NodeID, Key: ed25519.PublicKey(bytes.Clone(req.Key[:]))}
	// The signature first: a proof that does not verify learns nothing
	// about the roster. A small-order key would verify anything.
	if edkey.Validate(peer.Key) != nil ||
		!identity.Verify(peer.Key, req.Signature[:], wire.LabelNodeProof, p.x.proofFields(peer.ID, peer.Key)...) {
		return nil, Peer{}, ErrProofRejected
	}
	if err := ss.admit(peer); err != nil {
		return nil, Peer{}, err
	}
	keys, err := DeriveSessionKeys(SealLabel, p.secret, p.x.transcript(peer.ID))
	if err != nil {
		return nil, Peer{}, err
	}
	ss.peer, ss.proven = peer, true
	return keys.ServerSealer(), peer, nil
}

// admit checks a verified key against the roster as applied now, marking
// the connection when the key is revoked.
func (ss *Session) admit(p Peer) error {
	r := ss.srv.Roster
	switch {
	case r == nil:
		return ErrNoCluster
	case !r.HasVoters():
		return ErrRosterNotApplied
	case r.Revoked(p.Key):
		ss.revoked = true
		return fmt.Errorf("%w: node %q", ErrKeyRevoked, p.ID)
	}
	if key, ok := r.MemberKey(p.ID); !ok || !bytes.Equal(key, p.Key) {
		return fmt.Errorf("%w: node %q", ErrKeyUnknown, p.ID)
	}
	return nil
}

// Proven returns the connection's proven peer after checking its key
// against the roster again, so a key revoked or forgotten since the proof
// stops admitting at the next request. ErrNotProven means no proof (the
// node answers node-identity-required); ErrKeyRevoked also covers a
// connection that presented a revoked key in a refused proof.
func (ss *Session) Proven() (Peer, error) {
	switch {
	case ss.revoked:
		return Peer{}, ErrKeyRevoked
	case !ss.proven:
		return Peer{}, ErrNotProven
	}
	if err := ss.admit(ss.peer); err != nil {
		return Peer{}, err
	}
	return ss.peer, nil
}

// PresentedRevokedKey reports whether this connection presented a key the
// cluster revoked, in a proof or since (pace-node §8.1: a revoked key outranks
// every admission route, loopback and --fleet-open included).
func (ss *Session) PresentedRevokedKey() bool {
	_, err := ss.Proven()
	return errors.Is(err, ErrKeyRevoked)
}

// Outstanding reports whether a challenge awaits its proof.
func (ss *Session) Outstanding() bool { return ss.pending != nil }
