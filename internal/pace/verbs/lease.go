package verbs

import (
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Top-level arities of the scheduler verbs (pace-wire §1.12).
const (
	LeaseArity      = 5
	LeaseGrantArity = 6
	ReleaseArity    = 2
)

// LeaseRequest is LEASE: `fingerprint, key, codecs, exclusions(nested),
// toolchainLabel` (pace-wire §1.12, pace-wire §3.9.2).
type LeaseRequest struct {
	Fingerprint string
	Key         string
	Codecs      wire.CodecList // what the client can produce
	// Exclusions are endpoints this client failed to reach lately, newest
	// first; the scheduler picks none of them.
	Exclusions     []string
	ToolchainLabel string // e.g. "g++-13 13.3.0"; may be empty
}

// Append appends the request payload.
func (r LeaseRequest) Append(dst []byte) []byte {
	dst = wire.AppendStringField(dst, r.Fingerprint)
	dst = wire.AppendStringField(dst, r.Key)
	dst = r.Codecs.AppendField(dst)
	dst = appendTextList(dst, r.Exclusions)
	return wire.AppendStringField(dst, r.ToolchainLabel)
}

// ParseLease reads a LEASE request split with its exact arity. Text the
// scheduler keeps or compares must be UTF-8 within its pace-wire §1.10 bound.
func ParseLease(fields [][]byte) (LeaseRequest, error) {
	p := newParser(wire.OpLease)
	if !p.arity(fields, LeaseArity) {
		return LeaseRequest{}, p.result()
	}
	r := LeaseRequest{
		Fingerprint:    p.required(fields[0], "fingerprint", MaxFingerprint),
		Key:            p.required(fields[1], "key", MaxKey),
		Codecs:         p.codecs(fields[2], "codecs"),
		Exclusions:     p.texts(fields[3], "exclusions", MaxExclusions, MaxExclusionLen),
		ToolchainLabel: p.text(fields[4], "toolchainLabel", MaxLabel),
	}
	if p.failed() {
		return LeaseRequest{}, p.result()
	}
	return r, nil
}

// LeaseGrant is LEASE's Ok body, exactly 6 fields: `[endpoint][leaseToken
// (base64 text)][workerCodecs][u32 lifetimeMs][dialHint or empty][workerKey
// 32 bytes or empty]` (pace-wire §1.13).
type LeaseGrant struct {
	Endpoint     string
	Token        string
	WorkerCodecs wire.CodecList
	LifetimeMs   uint32
	// DialHint is where the scheduler last saw the worker, only when that
	// address is one the worker reports as its own; the token signs
	// Endpoint, never the hint.
	DialHint  string
	WorkerKey []byte // 32 bytes, or nil
}

// Append appends the Ok payload.
func (g LeaseGrant) Append(dst []byte) []byte {
	dst = wire.AppendStringField(dst, g.Endpoint)
	dst = wire.AppendStringField(dst, g.Token)
	dst = g.WorkerCodecs.AppendField(dst)
	dst = wire.AppendU32Field(dst, g.LifetimeMs)
	dst = wire.AppendStringField(dst, g.DialHint)
	return wire.AppendField(dst, g.WorkerKey)
}

// ParseLeaseGrant reads LEASE's Ok payload (client side).
func ParseLeaseGrant(payload []byte) (LeaseGrant, error) {
	p := newParser(wire.OpLease)
	f := p.split(payload, LeaseGrantArity)
	if p.failed() {
		return LeaseGrant{}, p.result()
	}
	g := LeaseGrant{
		Endpoint:     p.required(f[0], "endpoint", MaxEndpoint),
		Token:        p.required(f[1], "leaseToken", MaxLeaseToken),
		WorkerCodecs: p.codecs(f[2], "workerCodecs"),
		LifetimeMs:   p.u32(f[3], "lifetimeMs"),
		DialHint:     p.text(f[4], "dialHint", MaxEndpoint),
		WorkerKey:    p.optExact(f[5], "workerKey", KeyLen),
	}
	if p.failed() {
		return LeaseGrant{}, p.result()
	}
	return g, nil
}

// ReleaseRequest is RELEASE: `[leaseToken][key]`; its Ok body is empty.
type ReleaseRequest struct {
	Token string
	Key   string
}

// Append appends the request payload.
func (r ReleaseRequest) Append(dst []byte) []byte {
	dst = wire.AppendStringField(dst, r.Token)
	return wire.AppendStringField(dst, r.Key)
}

// ParseRelease reads a RELEASE request split with its exact arity.
func ParseRelease(fields [][]byte) (ReleaseRequest, error) {
	p := newParser(wire.OpRelease)
	if !p.arity(fields, ReleaseArity) {
		return ReleaseRequest{}, p.result()
	}
	r := ReleaseRequest{
		Token: p.required(fields[0], "leaseToken", MaxLeaseToken),
		Key:   p.required(fields[1], "key", MaxKey),
	}
	if p.failed() {
		return ReleaseRequest{}, p.result()
	}
	return r, nil
}

// appendTextList appends a nested list of text entries as one field.
func appendTextList(dst []byte, entries []string) []byte {
	dst, mark := wire.BeginField(dst)
	for _, e := range entries {
		dst = wire.AppendStringField(dst, e)
	}
	return wire.EndField(dst, mark)
}
