package verbs

import (
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// FleetSummary arities and bounds (pace-wire §1.13).
const (
	FleetSummaryArity        = 1
	FleetSummaryOkArity      = 3
	fleetSummaryFields       = 11
	MaxSummaryMembers        = 10
	FleetSummaryNonceLen     = 32
	fleetSummarySignatureLen = 64
)

// Fleet states a summary reports.
const (
	FleetSolitary    uint8 = 1
	FleetEstablished uint8 = 2
	FleetPending     uint8 = 3
)

// FleetSummaryRequest is FLEET-SUMMARY `[nonce 32]`: the asker's fresh nonce, which the
// answer's signature covers, so an answer cannot be replayed to another asker.
type FleetSummaryRequest struct{ Nonce [FleetSummaryNonceLen]byte }

// Append appends the request payload.
func (r FleetSummaryRequest) Append(dst []byte) []byte { return wire.AppendField(dst, r.Nonce[:]) }

// ParseFleetSummaryRequest reads a FLEET-SUMMARY request.
func ParseFleetSummaryRequest(fields [][]byte) (FleetSummaryRequest, error) {
	p := newParser(wire.OpFleetSummary)
	var r FleetSummaryRequest
	if p.arity(fields, FleetSummaryArity) {
		p.exact(fields[0], "nonce", r.Nonce[:])
	}
	return r, p.result()
}

// FleetSummary is a node's account of its fleet (pace-wire §1.13): the cluster, whether it is
// a cluster of one or an established fleet, its leader and where it answers, this node and
// its endpoints, and up to ten member ids of memberTotal.
type FleetSummary struct {
	ClusterID          string
	State              uint8
	CreatedAt          uint64 // unix seconds; 0 when not recorded
	LeaderID           string
	LeaderNodeEndpoint string
	NodeID             string
	RaftEndpoint       string // empty for a learner
	Members            []string
	MemberTotal        uint64
	NodeEndpoint       string
	LeaderKey          []byte // 32 bytes, or empty when the leader is not known
}

// AppendField appends the summary as one nested field.
func (s FleetSummary) AppendField(dst []byte) []byte {
	dst, mark := wire.BeginField(dst)
	dst = wire.AppendStringField(dst, s.ClusterID)
	dst = wire.AppendU8Field(dst, s.State)
	dst = wire.AppendU64Field(dst, s.CreatedAt)
	dst = wire.AppendStringField(dst, s.LeaderID)
	dst = wire.AppendStringField(dst, s.LeaderNodeEndpoint)
	dst = wire.AppendStringField(dst, s.NodeID)
	dst = wire.AppendStringField(dst, s.RaftEndpoint)
	members, m := wire.BeginField(dst)
	for _, id := range s.Members {
		members = wire.AppendStringField(members, id)
	}
	dst = wire.EndField(members, m)
	dst = wire.AppendU64Field(dst, s.MemberTotal)
	dst = wire.AppendStringField(dst, s.NodeEndpoint)
	dst = wire.AppendField(dst, s.LeaderKey)
	return wire.EndField(dst, mark)
}

// FleetSummaryOk is FLEET-SUMMARY's Ok body: `[summary][key 32][sig 64]`, the signature by
// the answering node's identity key over the asker's nonce and the summary's bytes.
type FleetSummaryOk struct {
	Summary    FleetSummary
	SummaryRaw []byte // the nested field as sent: what the signature covers
	Key        []byte
	Signature  []byte
}

// ParseFleetSummaryOk reads FLEET-SUMMARY's Ok payload (the asker's side).
func ParseFleetSummaryOk(payload []byte) (FleetSummaryOk, error) {
	p := newParser(wire.OpFleetSummary)
	f := p.split(payload, FleetSummaryOkArity)
	if p.failed() {
		return FleetSummaryOk{}, p.result()
	}
	ok := FleetSummaryOk{SummaryRaw: f[0], Key: make([]byte, 32), Signature: make([]byte, fleetSummarySignatureLen)}
	p.exact(f[1], "key", ok.Key)
	p.exact(f[2], "signature", ok.Signature)
	ok.Summary = p.fleetSummary(f[0])
	return ok, p.result()
}

func (p *parser) fleetSummary(f []byte) FleetSummary {
	fs := p.list(f, "summary", fleetSummaryFields)
	if p.failed() || len(fs) != fleetSummaryFields {
		p.malformed("summary", "%d fields where a summary has %d", len(fs), fleetSummaryFields)
		return FleetSummary{}
	}
	s := FleetSummary{
		ClusterID: p.required(fs[0], "clusterId", MaxID), CreatedAt: p.u64(fs[2], "createdAt"),
		LeaderID: p.text(fs[3], "leaderId", MaxID), LeaderNodeEndpoint: p.text(fs[4], "leaderNodeEndpoint", MaxEndpoint),
		NodeID: p.required(fs[5], "nodeId", MaxID), RaftEndpoint: p.text(fs[6], "raftEndpoint", MaxEndpoint),
		MemberTotal: p.u64(fs[8], "memberTotal"), NodeEndpoint: p.text(fs[9], "nodeEndpoint", MaxEndpoint),
		LeaderKey: p.optExact(fs[10], "leaderKey", 32),
	}
	if st, err := wire.U8(fs[1]); err != nil || st < FleetSolitary || st > FleetPending {
		p.malformed("state", "not 01 solitary, 02 established or 03 pending")
	} else {
		s.State = st
	}
	for _, m := range p.list(fs[7], "members", MaxSummaryMembers) {
		s.Members = append(s.Members, p.required(m, "member", MaxID))
	}
	if !p.failed() && s.MemberTotal < uint64(len(s.Members)) {
		p.malformed("memberTotal", "%d is fewer than the %d members listed", s.MemberTotal, len(s.Members))
	}
	return s
}
