package sealedconn

import (
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// A nodeproof.Sealer is what frameserver.Conn.InstallSealer takes.
var _ frameserver.Sealer = (*nodeproof.Sealer)(nil)

// ServeProof answers NODE-CHALLENGE and PROVE-NODE for the connection
// whose proof state is s. An accepted PROVE-NODE installs the session's
// Sealer, so its empty Ok reply is the first sealed frame; refusals go out
// as Error replies (unsealed, unless the connection was already sealed).
// Any other op is answered unknown-opcode: route only the node-proof family
// here.
func ServeProof(c *frameserver.Conn, s *nodeproof.Session, req *frameserver.Request) frameserver.Reply {
	switch req.Op() {
	case wire.OpNodeChallenge:
		payload, err := s.Challenge(req.Fields)
		if err != nil {
			return refuse(err)
		}
		return frameserver.Ok(payload)
	case wire.OpProveNode:
		sealer, _, err := s.Prove(req.Fields)
		if err != nil {
			return refuse(err)
		}
		c.InstallSealer(sealer)
		return frameserver.Ok(nil)
	}
	return frameserver.RefuseCode(wire.CodeUnknownOpcode)
}

// RefuseUnproven is the reply for a verb that needs a proven live key
// (REGISTER, HEARTBEAT, WITHDRAW, NODE-ANNOUNCE) when s.Proven fails:
// node-identity-required, node-key-revoked, node-key-unknown or
// roster-not-yet-applied.
func RefuseUnproven(err error) frameserver.Reply { return refuse(err) }

func refuse(err error) frameserver.Reply {
	r, ok := nodeproof.RefusalFor(err)
	if !ok {
		r = wire.Refusal{Code: wire.CodeNodeProofRejected, Message: err.Error()}
	}
	return frameserver.Refuse(r)
}

// CountSealRefusals wraps next (nil: no other observer) so that every
// connection the server closes for a failed tag counts
// pace_node_sealed_frames_refused_total.
func CountSealRefusals(next frameserver.Observer, counters *nodeproof.Counters) frameserver.Observer {
	if next == nil {
		next = frameserver.NopObserver{}
	}
	return sealObserver{Observer: next, counters: counters}
}

type sealObserver struct {
	frameserver.Observer
	counters *nodeproof.Counters
}

func (o sealObserver) ConnClosed(reason frameserver.CloseReason) {
	if reason == frameserver.ClosedBadTag {
		o.counters.SealedFramesRefused.Add(1)
	}
	o.Observer.ConnClosed(reason)
}
