package peerlink

import (
	"bytes"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// AcceptHandshake is the accepting end of one handshake: the challenge it
// sent and the ephemeral key behind it. It judges one proof.
type AcceptHandshake struct {
	m     *Member
	c     challenge
	eph   *nodeproof.Ephemeral
	spent bool
}

// Judgement is the acceptor's answer to a proof.
type Judgement struct {
	// Verdict is the frame to send before anything else happens; nil when
	// the link closes without one (no key recorded, or a bad signature).
	Verdict []byte
	// Outcome is the verdict's, when there is one.
	Outcome Outcome
	// Dialler is the member the proof proved, set whenever Verdict is: its
	// id and the key its signature verified under.
	Dialler Peer
	// Target is the member the dialler meant to reach, set with Dialler.
	Target string
	// Direction is the session the dialler asked for, set with Dialler.
	Direction Direction
	// Session is the proven link, set when the outcome is Accepted.
	Session *Session
}

// Accept starts the accepting end of a handshake: a fresh nonce and
// ephemeral key. Send Challenge at once, before reading anything.
func (m *Member) Accept() (*AcceptHandshake, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	nonce, eph, err := m.fresh()
	if err != nil {
		return nil, err
	}
	return &AcceptHandshake{m: m, c: challenge{nonce: nonce, eph: eph.Public()}, eph: eph}, nil
}

// Challenge is the challenge frame.
func (h *AcceptHandshake) Challenge() []byte { return h.c.appendFrame(nil) }

// Judge answers a proof frame. The signature is checked first, under the
// key the roster records for the claimed id; only a proof that verifies
// earns a verdict, and only then are its claims judged. A refusal comes
// back as an error (wrapping ErrNotAProof, ErrUnknownKey, ErrBadProof,
// ErrOwnID, ErrDiallerKeyRevoked or ErrWrongTarget) beside a Judgement
// whose Verdict, if set, must still be sent before the link is closed.
func (h *AcceptHandshake) Judge(frame []byte) (Judgement, error) {
	if h.spent {
		return Judgement{}, ErrSpent
	}
	h.spent = true
	p, err := parseProof(frame)
	if err != nil {
		return Judgement{}, fmt.Errorf("%w: %w", ErrNotAProof, err)
	}
	x := &transcript{c: h.c, p: p}
	dialler, revoked, secret, err := h.verify(x)
	if err != nil {
		return Judgement{}, err
	}
	outcome, refusal := h.claims(x, revoked)
	j := Judgement{Outcome: outcome, Dialler: dialler, Target: p.target, Direction: p.dir}
	j.Verdict = h.sign(x, outcome)
	if refusal != nil {
		return j, refusal
	}
	if j.Session, err = h.m.sessionFor(RoleAcceptor, x, secret, dialler, h.m.ID); err != nil {
		return Judgement{}, err
	}
	return j, nil
}

// verify checks the proof's signature under the recorded key, then that
// its ephemeral key gives a secret. Until this passes, the claimed id is
// nobody's, so no error text names it.
func (h *AcceptHandshake) verify(x *transcript) (Peer, bool, []byte, error) {
	key, revoked, ok := h.m.Roster.Key(x.p.dialler)
	if !ok {
		return Peer{}, false, nil, ErrUnknownKey
	}
	if !verifies(key, x.p.sig[:], wire.LabelRaftProof, x.proofFields()) {
		return Peer{}, false, nil, ErrBadProof
	}
	secret, err := h.eph.SharedSecret(x.p.eph)
	if err != nil {
		return Peer{}, false, nil, fmt.Errorf("%w: %w", ErrBadProof, err)
	}
	return Peer{ID: x.p.dialler, Key: bytes.Clone(key)}, revoked, secret, nil
}

// claims judges a verified proof's claims, in the order of pace-consensus §7.3.3.
func (h *AcceptHandshake) claims(x *transcript, revoked bool) (Outcome, error) {
	switch self := h.m.ID; {
	case x.p.dialler == self:
		return OwnID, fmt.Errorf("%w: a peer proved this member's id %q: two machines hold one key", ErrOwnID, self)
	case revoked:
		return Revoked, fmt.Errorf("%w: member %q", ErrDiallerKeyRevoked, x.p.dialler)
	case x.p.target != self:
		return WrongTarget, fmt.Errorf("%w: member %q dialled %q and reached %q", ErrWrongTarget, x.p.dialler, x.p.target, self)
	}
	return Accepted, nil
}

// sign builds the verdict frame over the whole transcript.
func (h *AcceptHandshake) sign(x *transcript, o Outcome) []byte {
	v := verdict{acceptor: h.m.ID, outcome: o}
	copy(v.sig[:], h.m.Key.Sign(wire.LabelRaftVerdict, x.verdictFields(v.acceptor, o)...))
	return v.appendFrame(nil)
}
