package peerlink

import (
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// SessionLabel is the HKDF label of the link's session keys. It names a key
// derivation, not a signature (those are wire.LabelRaftProof and
// wire.LabelRaftVerdict), and carries the version so that keys of two
// versions never coincide.
const SessionLabel = "pace-raft-v5"

// Field counts of the handshake payloads.
const (
	challengeArity = 2
	proofArity     = 6
	verdictArity   = 3
)

// challenge is the acceptor's opening: its nonce and ephemeral key. Its
// version is the frame header's.
type challenge struct {
	nonce [NonceLen]byte
	eph   [EphemeralLen]byte
}

// proof is the dialler's answer.
type proof struct {
	dialler, target string
	nonce           [NonceLen]byte
	eph             [EphemeralLen]byte
	dir             Direction
	sig             [SignatureLen]byte
}

// verdict is the acceptor's signed judgement.
type verdict struct {
	acceptor string
	outcome  Outcome
	sig      [SignatureLen]byte
}

func (c *challenge) appendFrame(dst []byte) []byte {
	return appendFrame(dst, KindChallenge, c.nonce[:], c.eph[:])
}

func (p *proof) appendFrame(dst []byte) []byte {
	return appendFrame(dst, KindProof, []byte(p.dialler), []byte(p.target),
		p.nonce[:], p.eph[:], []byte{byte(p.dir)}, p.sig[:])
}

func (v *verdict) appendFrame(dst []byte) []byte {
	return appendFrame(dst, KindVerdict, []byte(v.acceptor), []byte{byte(v.outcome)}, v.sig[:])
}

// appendFrame appends a handshake frame whose payload is fields.
func appendFrame(dst []byte, k Kind, fields ...[]byte) []byte {
	n := 0
	for _, f := range fields {
		n += wire.FieldPrefixLen + len(f)
	}
	dst = AppendHeader(dst, k, uint32(n))
	for _, f := range fields {
		dst = wire.AppendField(dst, f)
	}
	return dst
}

// handshakeFields checks a whole handshake frame of kind k and splits its
// payload into arity fields.
func handshakeFields(frame []byte, k Kind, arity int) ([][]byte, error) {
	h, err := ParseHeader(frame, 0)
	if err != nil {
		return nil, err
	}
	if h.Kind != k {
		return nil, fmt.Errorf("a kind %d frame, not kind %d", h.Kind, k)
	}
	if uint64(len(frame)-HeaderLen) != uint64(h.Len) {
		return nil, fmt.Errorf("%d payload bytes where the header says %d", len(frame)-HeaderLen, h.Len)
	}
	return wire.SplitFields(nil, frame[HeaderLen:], arity)
}

func parseChallenge(frame []byte) (challenge, error) {
	f, err := handshakeFields(frame, KindChallenge, challengeArity)
	if err != nil {
		return challenge{}, err
	}
	var c challenge
	if err := fixed(c.nonce[:], f[0], "nonce"); err != nil {
		return challenge{}, err
	}
	return c, fixed(c.eph[:], f[1], "ephemeral key")
}

func parseProof(frame []byte) (proof, error) {
	f, err := handshakeFields(frame, KindProof, proofArity)
	if err != nil {
		return proof{}, err
	}
	p := proof{dialler: string(f[0]), target: string(f[1])}
	if err := firstError(memberID(p.dialler, "dialler"), memberID(p.target, "target"),
		fixed(p.nonce[:], f[2], "nonce"), fixed(p.eph[:], f[3], "ephemeral key"),
		fixed(p.sig[:], f[5], "signature")); err != nil {
		return proof{}, err
	}
	if len(f[4]) != 1 || !Direction(f[4][0]).Valid() {
		return proof{}, fmt.Errorf("direction field %x is not one this version knows", f[4])
	}
	p.dir = Direction(f[4][0])
	return p, nil
}

func parseVerdict(frame []byte) (verdict, error) {
	f, err := handshakeFields(frame, KindVerdict, verdictArity)
	if err != nil {
		return verdict{}, err
	}
	v := verdict{acceptor: string(f[0])}
	if err := firstError(memberID(v.acceptor, "acceptor"), fixed(v.sig[:], f[2], "signature")); err != nil {
		return verdict{}, err
	}
	if len(f[1]) != 1 || !Outcome(f[1][0]).valid() {
		return verdict{}, fmt.Errorf("outcome field %x is not one this version knows", f[1])
	}
	v.outcome = Outcome(f[1][0])
	return v, nil
}

// fixed copies a fixed-size field.
func fixed(dst, field []byte, what string) error {
	if len(field) != len(dst) {
		return fmt.Errorf("%s of %d bytes, want %d", what, len(field), len(dst))
	}
	copy(dst, field)
	return nil
}

// memberID refuses an id no member record could hold, so that nothing
// unprintable reaches a log line.
func memberID(id, what string) error {
	if err := fleet.CheckMemberID(id); err != nil {
		return fmt.Errorf("%s id: %w", what, err)
	}
	return nil
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// transcript is the handshake so far, in wire order.
type transcript struct {
	c challenge
	p proof
}

// proofFields are what sigD covers: the version, the challenge and every
// proof field but the signature.
func (x *transcript) proofFields() [][]byte {
	return [][]byte{{Version}, x.c.nonce[:], x.c.eph[:],
		[]byte(x.p.dialler), []byte(x.p.target), x.p.nonce[:], x.p.eph[:], {byte(x.p.dir)}}
}

// verdictFields are what sigA covers: everything so far, sigD included,
// then the verdict's own fields.
func (x *transcript) verdictFields(acceptor string, o Outcome) [][]byte {
	return append(x.proofFields(), x.p.sig[:], []byte(acceptor), []byte{byte(o)})
}

// keys is what the session keys are bound to besides the secret: both
// nonces, both ephemeral keys and both ids (the dialler is the "client").
func (x *transcript) keys(acceptor string) nodeproof.Transcript {
	return nodeproof.Transcript{
		ClientNonce: x.p.nonce, ServerNonce: x.c.nonce,
		ClientEphemeral: x.p.eph, ServerEphemeral: x.c.eph,
		ClientID: x.p.dialler, ServerID: acceptor,
	}
}
