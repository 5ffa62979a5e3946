package verbs

import (
	"net"
	"strconv"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Top-level arities of the joining verbs (pace-wire §1.12).
const (
	RegisterArity   = 5
	RegisterOkArity = 3 // at least; surplus positions are ignored
	HeartbeatArity  = 3
	WithdrawArity   = 1
	AnnounceArity   = 4
)

// RegisterRequest is REGISTER, one per toolchain: `fingerprint, endpoint,
// slots(u32), codecs, capacity(nested)`.
type RegisterRequest struct {
	Fingerprint string
	Endpoint    string // the worker's advertised host:port, handed to clients verbatim
	Slots       uint32 // 0 = let the scheduler size the worker from Capacity
	Codecs      wire.CodecList
	Capacity    Capacity
}

// Append appends the request payload.
func (r RegisterRequest) Append(dst []byte) []byte {
	dst = wire.AppendStringField(dst, r.Fingerprint)
	dst = wire.AppendStringField(dst, r.Endpoint)
	dst = wire.AppendU32Field(dst, r.Slots)
	dst = r.Codecs.AppendField(dst)
	return r.Capacity.AppendField(dst)
}

// ParseRegister reads a REGISTER request. Kept text that is not UTF-8 or
// exceeds its bound is refused malformed-registration naming the field
// (pace-wire §1.4, pace-node §6.1); grammar faults are malformed-frame.
func ParseRegister(fields [][]byte) (RegisterRequest, error) {
	p := newParser(wire.OpRegister)
	p.textCode = wire.CodeMalformedRegistration
	if !p.arity(fields, RegisterArity) {
		return RegisterRequest{}, p.result()
	}
	r := RegisterRequest{
		Fingerprint: p.required(fields[0], "fingerprint", MaxFingerprint),
		Endpoint:    p.endpoint(fields[1], "endpoint"),
		Slots:       p.u32(fields[2], "slots"),
		Codecs:      p.codecs(fields[3], "codecs"),
		Capacity:    p.capacity(fields[4], "capacity"),
	}
	if p.failed() {
		return RegisterRequest{}, p.result()
	}
	return r, nil
}

// endpoint reads a kept host:port with a non-empty host and a port in
// 1..65535. The host is not resolved: a scheduler is I/O-free.
func (p *parser) endpoint(f []byte, field string) string {
	s := p.required(f, field, MaxEndpoint)
	if p.failed() {
		return ""
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		p.fail(field, p.textCode, false, "%q is not host:port", s)
		return ""
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		p.fail(field, p.textCode, false, "%q has no port in 1..65535", s)
		return ""
	}
	return s
}

// RegisterOk is REGISTER's Ok body: `[workerId][clusterId][u64 epoch]`,
// read with variable arity (at least 3 positions).
type RegisterOk struct {
	WorkerID  string
	ClusterID string
	Epoch     uint64 // the scheduler's Raft term
}

// Append appends the Ok payload.
func (o RegisterOk) Append(dst []byte) []byte {
	dst = wire.AppendStringField(dst, o.WorkerID)
	dst = wire.AppendStringField(dst, o.ClusterID)
	return wire.AppendU64Field(dst, o.Epoch)
}

// ParseRegisterOk reads REGISTER's Ok payload (worker side).
func ParseRegisterOk(payload []byte) (RegisterOk, error) {
	p := newParser(wire.OpRegister)
	r := p.record(payload, "body", RegisterOkArity)
	if !p.failed() && r.Len() < RegisterOkArity {
		p.malformed("body", "%d fields where at least %d are required", r.Len(), RegisterOkArity)
	}
	pos := func(i int) []byte { b, _ := r.Field(i); return b }
	o := RegisterOk{
		WorkerID:  p.required(pos(0), "workerId", MaxID),
		ClusterID: p.required(pos(1), "clusterId", MaxID),
		Epoch:     p.u64(pos(2), "epoch"),
	}
	if p.failed() {
		return RegisterOk{}, p.result()
	}
	return o, nil
}

// HeartbeatRequest is HEARTBEAT: `workerId, inFlight(u32), load(nested)`.
// InFlight is machine-wide, shared by all of a machine's registrations.
type HeartbeatRequest struct {
	WorkerID string
	InFlight uint32
	Load     Load
}

// Append appends the request payload.
func (r HeartbeatRequest) Append(dst []byte) []byte {
	dst = wire.AppendStringField(dst, r.WorkerID)
	dst = wire.AppendU32Field(dst, r.InFlight)
	return r.Load.AppendField(dst)
}

// ParseHeartbeat reads a HEARTBEAT request.
func ParseHeartbeat(fields [][]byte) (HeartbeatRequest, error) {
	p := newParser(wire.OpHeartbeat)
	if !p.arity(fields, HeartbeatArity) {
		return HeartbeatRequest{}, p.result()
	}
	r := HeartbeatRequest{
		WorkerID: p.required(fields[0], "workerId", MaxID),
		InFlight: p.u32(fields[1], "inFlight"),
		Load:     p.load(fields[2], "load"),
	}
	if p.failed() {
		return HeartbeatRequest{}, p.result()
	}
	return r, nil
}

// WithdrawRequest is WITHDRAW `[workerId]`; an unknown id is answered Ok.
type WithdrawRequest struct {
	WorkerID string
}

// Append appends the request payload.
func (r WithdrawRequest) Append(dst []byte) []byte {
	return wire.AppendStringField(dst, r.WorkerID)
}

// ParseWithdraw reads a WITHDRAW request.
func ParseWithdraw(fields [][]byte) (WithdrawRequest, error) {
	p := newParser(wire.OpWithdraw)
	if !p.arity(fields, WithdrawArity) {
		return WithdrawRequest{}, p.result()
	}
	r := WithdrawRequest{WorkerID: p.required(fields[0], "workerId", MaxID)}
	if p.failed() {
		return WithdrawRequest{}, p.result()
	}
	return r, nil
}
