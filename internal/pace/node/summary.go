package node

import (
	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// fleetSummary answers FLEET-SUMMARY to anyone (pace-wire §1.13): this node's signed account
// of its fleet, over the asker's nonce. It admits nobody: a joiner checks the signature (and
// its --fleet-id pin) and still needs an operator's admission.
func (n *Node) fleetSummary(req *frameserver.Request) frameserver.Reply {
	r, err := verbs.ParseFleetSummaryRequest(req.Fields)
	if err != nil {
		ref, _ := verbs.RefusalOf(err)
		return frameserver.Refuse(ref)
	}
	raw := n.summary().AppendField(nil)
	fields, err := wire.SplitFields(nil, raw, 1)
	if err != nil {
		return frameserver.Refuse(wire.Refuse(wire.CodeMalformedFrame, "%v", err))
	}
	sig := n.id.Key.Sign(wire.LabelFleetSummary, r.Nonce[:], fields[0])
	body := wire.AppendField(wire.AppendField(raw, n.id.Key.Public()), sig)
	return frameserver.Ok(body)
}

// summary is this node's view of its fleet now.
func (n *Node) summary() verbs.FleetSummary {
	st, cs := n.cons.State(), n.cons.Status()
	s := verbs.FleetSummary{ClusterID: st.ClusterID(), State: verbs.FleetEstablished, NodeID: n.id.NodeID,
		NodeEndpoint: n.endpoint(), MemberTotal: uint64(st.Len()), CreatedAt: uint64(max(cs.CreatedAt, 0))}
	switch {
	case cs.Mode == consensus.Pending:
		s.State = verbs.FleetPending
	case st.Len() <= 1:
		s.State = verbs.FleetSolitary
	}
	if cs.Mode != consensus.Learner {
		s.RaftEndpoint = n.consensusEndpoint()
	}
	if lead, ok := st.Member(cs.LeaderID); ok {
		s.LeaderID, s.LeaderNodeEndpoint, s.LeaderKey = lead.ID, lead.SchedulerEndpoint, lead.Key
	}
	if b := n.boot.Load(); s.State == verbs.FleetPending && b != nil {
		// A pending node is only a pointer: its leader slots name the fleet it asked.
		s.LeaderID, s.LeaderNodeEndpoint, s.LeaderKey = b.LeaderID, b.NodeEndpoint, mustParseKey(b.Key)
	}
	for _, m := range st.Members() {
		if len(s.Members) == verbs.MaxSummaryMembers {
			break
		}
		s.Members = append(s.Members, m.ID)
	}
	return s
}
