package verbs

import (
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// ENROLL and its answer (pace-wire §1.13): a machine asking a fleet's leader to admit it as a
// learner, polled, never held.
const (
	EnrollArity        = 8
	EnrollOkArity      = 5
	EnrollNonceLen     = 32
	enrollKeyLen       = 32
	enrollSignatureLen = 64
)

// EnrollRoleLearner is the only role a machine may ask for; voting stays an operator's
// --cluster-admit (01 and 02 are retired).
const EnrollRoleLearner uint8 = 3

// Enrollment outcomes the leader answers.
const (
	EnrollPending  uint8 = 1
	EnrollApproved uint8 = 2
	EnrollRejected uint8 = 3
)

// EnrollRequest is ENROLL `[nodeId][nodeEndpoint][raftEndpoint][u8 role][publicKey 32][nonce
// 32][challenge 0|32][signature 64]`. The raft endpoint is recorded for the learner so that a
// later --cluster-admit can promote it without restating it. The signature, by the asking
// key, covers every other field as sent (Unsigned).
type EnrollRequest struct {
	NodeID       string
	NodeEndpoint string
	RaftEndpoint string
	Role         uint8
	Key          []byte
	Nonce        [EnrollNonceLen]byte
	Challenge    []byte // empty on the first ask, else the leader's latest challenge for the row
	Signature    []byte
}

// AppendUnsigned appends the seven fields the signature covers.
func (r EnrollRequest) AppendUnsigned(dst []byte) []byte {
	dst = wire.AppendStringField(dst, r.NodeID)
	dst = wire.AppendStringField(dst, r.NodeEndpoint)
	dst = wire.AppendStringField(dst, r.RaftEndpoint)
	dst = wire.AppendU8Field(dst, r.Role)
	dst = wire.AppendField(dst, r.Key)
	dst = wire.AppendField(dst, r.Nonce[:])
	return wire.AppendField(dst, r.Challenge)
}

// Append appends the whole request payload.
func (r EnrollRequest) Append(dst []byte) []byte {
	return wire.AppendField(r.AppendUnsigned(dst), r.Signature)
}

// ParseEnroll reads an ENROLL request. Unsigned is the signed part as received.
func ParseEnroll(fields [][]byte) (r EnrollRequest, unsigned []byte, err error) {
	p := newParser(wire.OpEnroll)
	if !p.arity(fields, EnrollArity) {
		return r, nil, p.result()
	}
	r.NodeID = p.required(fields[0], "nodeId", MaxID)
	r.NodeEndpoint = p.endpoint(fields[1], "nodeEndpoint")
	r.RaftEndpoint = p.endpoint(fields[2], "raftEndpoint")
	if role, err := wire.U8(fields[3]); err != nil || role != EnrollRoleLearner {
		p.malformed("role", "not 03 learner (a machine asks to learn; voting is an operator's --cluster-admit)")
	} else {
		r.Role = role
	}
	r.Key = make([]byte, enrollKeyLen)
	p.exact(fields[4], "publicKey", r.Key)
	p.exact(fields[5], "nonce", r.Nonce[:])
	r.Challenge = p.optExact(fields[6], "challenge", ChallengeLen)
	r.Signature = make([]byte, enrollSignatureLen)
	p.exact(fields[7], "signature", r.Signature)
	if p.failed() {
		return EnrollRequest{}, nil, p.result()
	}
	return r, r.AppendUnsigned(nil), nil
}

// ChallengeLen is an enrollment row's challenge.
const ChallengeLen = 32

// EnrollAnswer is ENROLL's Ok body `[u8 outcome][roster, approved only][challenge 32, pending
// only][answering key 32 or empty][signature 64 or empty]`. The signature, by the answering
// node's key, covers the asker's nonce and node id and the first three fields as sent, so an
// answer cannot be replayed to another poll or another machine. Joiners treat an unsigned
// answer as no answer.
type EnrollAnswer struct {
	Outcome   uint8
	Roster    []byte // a Roster record (AppendRoster); parse it with ParseRoster
	Challenge []byte
	Key       []byte
	Signature []byte
}

// AppendSigned appends the three fields the answer's signature covers.
func (a EnrollAnswer) AppendSigned(dst []byte) []byte {
	dst = wire.AppendU8Field(dst, a.Outcome)
	dst = wire.AppendField(dst, a.Roster)
	return wire.AppendField(dst, a.Challenge)
}

// Append appends the whole answer.
func (a EnrollAnswer) Append(dst []byte) []byte {
	return wire.AppendField(wire.AppendField(a.AppendSigned(dst), a.Key), a.Signature)
}

// ParseEnrollAnswer reads ENROLL's Ok body (the joiner's side). Signed is the signed part.
func ParseEnrollAnswer(payload []byte) (a EnrollAnswer, signed []byte, err error) {
	p := newParser(wire.OpEnroll)
	f := p.split(payload, EnrollOkArity)
	if p.failed() {
		return a, nil, p.result()
	}
	if o, err := wire.U8(f[0]); err != nil || o < EnrollPending || o > EnrollRejected {
		p.malformed("outcome", "not 01 pending, 02 approved or 03 rejected")
	} else {
		a.Outcome = o
	}
	a.Roster = append([]byte(nil), f[1]...)
	a.Challenge = p.optExact(f[2], "challenge", ChallengeLen)
	a.Key = p.optExact(f[3], "key", enrollKeyLen)
	a.Signature = p.optExact(f[4], "signature", enrollSignatureLen)
	switch {
	case p.failed():
	case (a.Key == nil) != (a.Signature == nil):
		p.malformed("signature", "a key without a signature, or a signature without a key")
	case (a.Outcome == EnrollApproved) != (len(a.Roster) > 0):
		p.malformed("roster", "a roster comes with an approval, and only with one")
	case (a.Outcome == EnrollPending) != (a.Challenge != nil):
		p.malformed("challenge", "a challenge comes with a pending answer, and only with one")
	}
	if p.failed() {
		return EnrollAnswer{}, nil, p.result()
	}
	return a, a.AppendSigned(nil), nil
}
