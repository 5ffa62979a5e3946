package verbs

import "github.com/buildfleet/buildfleet/internal/pace/wire"

// AnnounceRequest is NODE-ANNOUNCE: `endpoint, capacity(nested),
// load(nested), joinMemos(nested)` — every node states itself, worker or
// not. Its Ok body is empty.
type AnnounceRequest struct {
	Endpoint  string
	Capacity  Capacity
	Load      Load
	JoinMemos []JoinMemo
}

// JoinMemo is `[clusterId 1..64 bytes][key 32]`.
type JoinMemo struct {
	ClusterID string
	Key       [KeyLen]byte
}

// Append appends the request payload.
func (r AnnounceRequest) Append(dst []byte) []byte {
	dst = wire.AppendStringField(dst, r.Endpoint)
	dst = r.Capacity.AppendField(dst)
	dst = r.Load.AppendField(dst)
	dst, mark := wire.BeginField(dst)
	for _, m := range r.JoinMemos {
		dst = wire.AppendRecord(dst, []byte(m.ClusterID), m.Key[:])
	}
	return wire.EndField(dst, mark)
}

// ParseAnnounce reads a NODE-ANNOUNCE request.
func ParseAnnounce(fields [][]byte) (AnnounceRequest, error) {
	p := newParser(wire.OpNodeAnnounce)
	if !p.arity(fields, AnnounceArity) {
		return AnnounceRequest{}, p.result()
	}
	r := AnnounceRequest{
		Endpoint:  p.endpoint(fields[0], "endpoint"),
		Capacity:  p.capacity(fields[1], "capacity"),
		Load:      p.load(fields[2], "load"),
		JoinMemos: p.joinMemos(fields[3], "joinMemos"),
	}
	if p.failed() {
		return AnnounceRequest{}, p.result()
	}
	return r, nil
}

func (p *parser) joinMemos(f []byte, field string) []JoinMemo {
	entries := p.list(f, field, MaxJoinMemos)
	if len(entries) == 0 {
		return nil
	}
	out := make([]JoinMemo, len(entries))
	for i, e := range entries {
		r := p.record(e, field, 2)
		id, _ := r.Field(0)
		key, _ := r.Field(1)
		out[i].ClusterID = p.required(id, field+".clusterId", MaxID)
		p.exact(key, field+".key", out[i].Key[:])
	}
	if p.failed() {
		return nil
	}
	return out
}
