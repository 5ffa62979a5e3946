package node

import (
	"context"
	"errors"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// recordMove commits what a member's NODE-ANNOUNCE says of it (pace-consensus §7.4), before the
// announcement is answered: one Announce through consensus carrying its node endpoint, and its
// consensus endpoint with it where the two shared a host (fleet.Moved). A statement no newer
// than the record, an unnumbered one, or one from a machine that is not a member changes
// nothing and is answered Ok; a proposal that fails is answered with its refusal, so the
// member tries again (following not-leader, if that is why).
func (n *Node) recordMove(ctx context.Context, id string, fields [][]byte) frameserver.Reply {
	req, err := verbs.ParseAnnounce(fields) // the scheduler accepted it: it parses
	seq, numbered := req.Load.AnnounceSeq.Get()
	m, member := n.cons.State().Member(id)
	if err != nil || !numbered || !member {
		return frameserver.Ok(nil)
	}
	cmd, ok := fleet.Moved(m, req.Endpoint, seq)
	if !ok {
		return frameserver.Ok(nil)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	switch err := n.cons.Propose(ctx, cmd); {
	case err == nil:
		n.logMove(m, cmd)
	case !errors.Is(err, fleet.ErrNotNeeded): // not needed: a newer statement got there first
		return frameserver.Refuse(proposalRefusal(err))
	}
	return frameserver.Ok(nil)
}

// logMove says what a recorded move changed; a first statement, or one that changed nothing
// but the sequence, is not a move.
func (n *Node) logMove(was fleet.Member, cmd fleet.Announce) {
	raftMoved := cmd.RaftEndpoint != "" && cmd.RaftEndpoint != was.RaftEndpoint
	if was.NodeEndpoint == "" || cmd.NodeEndpoint == was.NodeEndpoint && !raftMoved {
		return
	}
	to := cmd.RaftEndpoint
	if !raftMoved {
		to = was.RaftEndpoint + " (kept)"
	}
	n.log.Info("recorded a member's move", "member", was.ID, "node_from", was.NodeEndpoint, "node_to", cmd.NodeEndpoint,
		"raft_from", was.RaftEndpoint, "raft_to", to)
}
