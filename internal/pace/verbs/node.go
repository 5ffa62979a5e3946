package verbs

import (
	"net"
	"net/netip"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Arities of MINT-TICKET and the node proof (pace-wire §1.12, pace-wire §1.15).
const (
	MintTicketArity      = 1
	MintTicketOkArity    = 1
	NodeChallengeArity   = 2
	NodeChallengeOkArity = 5
	ProveNodeArity       = 3
)

// MintTicketRequest is MINT-TICKET `[audience]`: the exact host:port the
// client is about to dial. An empty, loopback or wildcard audience is
// malformed (pace-wire §1.15.2).
type MintTicketRequest struct {
	Audience string
}

// Append appends the request payload.
func (r MintTicketRequest) Append(dst []byte) []byte {
	return wire.AppendStringField(dst, r.Audience)
}

// ParseMintTicket reads a MINT-TICKET request.
func ParseMintTicket(fields [][]byte) (MintTicketRequest, error) {
	p := newParser(wire.OpMintTicket)
	if !p.arity(fields, MintTicketArity) {
		return MintTicketRequest{}, p.result()
	}
	r := MintTicketRequest{Audience: p.endpoint(fields[0], "audience")}
	if !p.failed() && !remoteHost(r.Audience) {
		p.malformed("audience", "%q names this machine or no machine", r.Audience)
	}
	if p.failed() {
		return MintTicketRequest{}, p.result()
	}
	return r, nil
}

// remoteHost reports whether an endpoint's host could be another machine:
// not a loopback or wildcard address, not "localhost".
func remoteHost(endpoint string) bool {
	host, _, _ := net.SplitHostPort(endpoint)
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return false
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return true // a name: resolved by the client when it dials
	}
	addr = addr.Unmap()
	return !addr.IsLoopback() && !addr.IsUnspecified()
}

// MintTicketOk is MINT-TICKET's Ok body: exactly one field, the ticket
// (opaque to the client, at most MaxTicket bytes).
type MintTicketOk struct {
	Ticket []byte
}

// Append appends the Ok payload.
func (o MintTicketOk) Append(dst []byte) []byte { return wire.AppendField(dst, o.Ticket) }

// ParseMintTicketOk reads MINT-TICKET's Ok payload (client side).
func ParseMintTicketOk(payload []byte) (MintTicketOk, error) {
	p := newParser(wire.OpMintTicket)
	f := p.split(payload, MintTicketOkArity)
	if !p.failed() && (len(f[0]) == 0 || len(f[0]) > MaxTicket) {
		p.fail("ticket", wire.CodeMalformedFrame, len(f[0]) > MaxTicket, "%d bytes, 1..%d required", len(f[0]), MaxTicket)
	}
	if p.failed() {
		return MintTicketOk{}, p.result()
	}
	return MintTicketOk{Ticket: append([]byte(nil), f[0]...)}, nil
}

// NodeChallengeRequest is NODE-CHALLENGE `[nonce 32][ephemeral X25519 32]`.
type NodeChallengeRequest struct {
	Nonce     [NonceLen]byte
	Ephemeral [KeyLen]byte
}

// Append appends the request payload.
func (r NodeChallengeRequest) Append(dst []byte) []byte {
	dst = wire.AppendField(dst, r.Nonce[:])
	return wire.AppendField(dst, r.Ephemeral[:])
}

// ParseNodeChallenge reads a NODE-CHALLENGE request.
func ParseNodeChallenge(fields [][]byte) (NodeChallengeRequest, error) {
	p := newParser(wire.OpNodeChallenge)
	var r NodeChallengeRequest
	if p.arity(fields, NodeChallengeArity) {
		p.exact(fields[0], "nonce", r.Nonce[:])
		p.exact(fields[1], "ephemeral", r.Ephemeral[:])
	}
	if p.failed() {
		return NodeChallengeRequest{}, p.result()
	}
	return r, nil
}

// NodeChallengeOk is NODE-CHALLENGE's Ok body: `[serverId][serverKey 32]
// [nonceS 32][ephS 32][sigS 64]`, the signature over both halves.
type NodeChallengeOk struct {
	ServerID  string
	ServerKey [KeyLen]byte
	Nonce     [NonceLen]byte
	Ephemeral [KeyLen]byte
	Signature [SignatureLen]byte
}

// Append appends the Ok payload.
func (o NodeChallengeOk) Append(dst []byte) []byte {
	dst = wire.AppendStringField(dst, o.ServerID)
	dst = wire.AppendField(dst, o.ServerKey[:])
	dst = wire.AppendField(dst, o.Nonce[:])
	dst = wire.AppendField(dst, o.Ephemeral[:])
	return wire.AppendField(dst, o.Signature[:])
}

// ParseNodeChallengeOk reads NODE-CHALLENGE's Ok payload (prover side).
func ParseNodeChallengeOk(payload []byte) (NodeChallengeOk, error) {
	p := newParser(wire.OpNodeChallenge)
	f := p.split(payload, NodeChallengeOkArity)
	var o NodeChallengeOk
	if !p.failed() {
		o.ServerID = p.required(f[0], "serverId", MaxID)
		p.exact(f[1], "serverKey", o.ServerKey[:])
		p.exact(f[2], "nonce", o.Nonce[:])
		p.exact(f[3], "ephemeral", o.Ephemeral[:])
		p.exact(f[4], "signature", o.Signature[:])
	}
	if p.failed() {
		return NodeChallengeOk{}, p.result()
	}
	return o, nil
}

// ProveNodeRequest is PROVE-NODE `[clientId][clientKey 32][sigC 64]`, the
// signature over the whole exchange including the server's signature.
type ProveNodeRequest struct {
	NodeID    string
	Key       [KeyLen]byte
	Signature [SignatureLen]byte
}

// Append appends the request payload.
func (r ProveNodeRequest) Append(dst []byte) []byte {
	dst = wire.AppendStringField(dst, r.NodeID)
	dst = wire.AppendField(dst, r.Key[:])
	return wire.AppendField(dst, r.Signature[:])
}

// ParseProveNode reads a PROVE-NODE request.
func ParseProveNode(fields [][]byte) (ProveNodeRequest, error) {
	p := newParser(wire.OpProveNode)
	var r ProveNodeRequest
	if p.arity(fields, ProveNodeArity) {
		r.NodeID = p.required(fields[0], "nodeId", MaxID)
		p.exact(fields[1], "key", r.Key[:])
		p.exact(fields[2], "signature", r.Signature[:])
	}
	if p.failed() {
		return ProveNodeRequest{}, p.result()
	}
	return r, nil
}
