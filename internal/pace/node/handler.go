package node

import (
	"context"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof/sealedconn"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// connState is what the node remembers about one connection: its node-proof session and the
// machine a ticket admitted. Neither is an admission decision: the roster is asked again on
// every request.
type connState struct {
	proof         *nodeproof.Session
	ticketMachine string
}

func (n *Node) state(c *frameserver.Conn) *connState {
	if st, ok := c.Data().(*connState); ok {
		return st
	}
	st := &connState{proof: n.proof.NewSession()}
	c.SetData(st)
	return st
}

// Serve routes every admitted frame of the node port by its verb's family; each surface
// refuses what it does not serve exactly as pace-wire §1.12 and pace-wire §1.16 say.
func (n *Node) Serve(ctx context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	switch req.Info.Family {
	case wire.FamilyCache:
		if n.tier == nil {
			return frameserver.RefuseCode(wire.CodeUnknownOpcode)
		}
		return n.tier.Serve(ctx, c, req)
	case wire.FamilySharedCache:
		return frameserver.Refuse(wire.Refuse(wire.CodeNotSharedCache, "no shared cache is named in this cluster; this is not it"))
	case wire.FamilySession:
		return n.session(c, req)
	case wire.FamilyNodeProof:
		return sealedconn.ServeProof(c, n.state(c).proof, req)
	case wire.FamilyScheduler:
		return n.scheduler(ctx, c, req)
	case wire.FamilyCompile:
		return n.compile(ctx, c, req)
	case wire.FamilyNode:
		if req.Op() == wire.OpExplainAdmission {
			return n.explain(c, req)
		}
	case wire.FamilyFormation:
		return n.fleetSummary(req)
	case wire.FamilyEnrollment:
		return n.enrollment(ctx, c, req)
	}
	return frameserver.RefuseCode(wire.CodeUnknownOpcode) // a component this build does not run
}

func (n *Node) session(c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	if req.Op() == wire.OpMintTicket {
		return n.mintTicket(c, req)
	}
	return n.auth(c, req)
}

// compile answers COMPILE to admitted callers and CORDON to this machine only.
func (n *Node) compile(ctx context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	if n.work == nil {
		return frameserver.Refuse(wire.Refuse(wire.CodeDispatchNotPermitted, "this endpoint runs no compile worker (--slots=0)"))
	}
	if req.Op() == wire.OpCordon {
		return n.cordon(c, req)
	}
	if v := n.admit(c); !v.Admitted {
		n.work.Counters().RefusedNotAMember.Add(1)
		return n.notAMember(v)
	}
	return n.work.Serve(ctx, c, req)
}
