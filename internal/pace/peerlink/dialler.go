package peerlink

import (
	"bytes"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// DialHandshake is the dialling end of one handshake: Prove answers the
// challenge, then Check reads the verdict, each once and in that order.
type DialHandshake struct {
	m      *Member
	x      transcript
	eph    *nodeproof.Ephemeral
	secret []byte
	stage  uint8 // 0: awaiting the challenge, 1: the verdict, 2: done
}

// Dial starts the dialling end of a handshake with target, asking for dir.
func (m *Member) Dial(target string, dir Direction) (*DialHandshake, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if err := memberID(target, "target"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	if !dir.Valid() {
		return nil, fmt.Errorf("%w: %v", ErrBadConfig, dir)
	}
	nonce, eph, err := m.fresh()
	if err != nil {
		return nil, err
	}
	p := proof{dialler: m.ID, target: target, nonce: nonce, eph: eph.Public(), dir: dir}
	return &DialHandshake{m: m, x: transcript{p: p}, eph: eph}, nil
}

// Target is the member this handshake means to reach.
func (h *DialHandshake) Target() string { return h.x.p.target }

// Prove reads the challenge frame and returns the proof frame to send.
// Anything but a challenge of this version is ErrNoChallenge.
func (h *DialHandshake) Prove(frame []byte) ([]byte, error) {
	if h.stage != 0 {
		return nil, ErrSpent
	}
	h.stage = 1
	c, err := parseChallenge(frame)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoChallenge, err)
	}
	if h.secret, err = h.eph.SharedSecret(c.eph); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoChallenge, err)
	}
	h.x.c = c
	copy(h.x.p.sig[:], h.m.Key.Sign(wire.LabelRaftProof, h.x.proofFields()...))
	return h.x.p.appendFrame(nil), nil
}

// Check reads the verdict frame. It verifies the signature under the key
// the roster records for the member the verdict names before it believes
// the outcome; the session it returns is the only way to send a message.
func (h *DialHandshake) Check(frame []byte) (*Session, error) {
	if h.stage != 1 {
		return nil, ErrSpent
	}
	h.stage = 2
	v, err := parseVerdict(frame)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAcceptorProof, err)
	}
	acceptor, err := h.verify(v)
	if err != nil {
		return nil, err
	}
	if err := h.outcome(v); err != nil {
		return nil, err
	}
	return h.m.sessionFor(RoleDialler, &h.x, h.secret, acceptor, acceptor.ID)
}

// verify checks the verdict's signature, then the answering key's standing.
func (h *DialHandshake) verify(v verdict) (Peer, error) {
	key, revoked, ok := h.m.Roster.Key(v.acceptor)
	if !ok {
		return Peer{}, fmt.Errorf("%w: %q answered when dialled as %q", ErrAcceptorKeyUnknown, v.acceptor, h.x.p.target)
	}
	if !verifies(key, v.sig[:], wire.LabelRaftVerdict, h.x.verdictFields(v.acceptor, v.outcome)) {
		return Peer{}, fmt.Errorf("%w: dialled %q", ErrAcceptorProof, h.x.p.target)
	}
	if revoked {
		return Peer{}, fmt.Errorf("%w: member %q, dialled as %q", ErrAcceptorKeyRevoked, v.acceptor, h.x.p.target)
	}
	return Peer{ID: v.acceptor, Key: bytes.Clone(key)}, nil
}

// outcome turns a verified verdict into this end's refusal, if any.
func (h *DialHandshake) outcome(v verdict) error {
	self, target := h.m.ID, h.x.p.target
	switch {
	case v.outcome == Revoked:
		return fmt.Errorf("%w: member %q says this member's key (%q) is revoked", ErrDiallerKeyRevoked, v.acceptor, self)
	case v.outcome == OwnID:
		return fmt.Errorf("%w: member %q answered with this member's own id: two machines hold one key", ErrOwnID, v.acceptor)
	case v.outcome == WrongTarget || v.acceptor != target:
		return fmt.Errorf("%w: dialled %q, %q answered", ErrWrongTarget, target, v.acceptor)
	}
	return nil
}
