package consensus

import (
	"fmt"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// applyEntries applies committed entries in order; every replica reaches
// the same state and the same refusals, because fleet.Apply depends on the
// state and the entry alone.
func (n *Node) applyEntries(ents []*pb.Entry) error {
	for _, e := range ents {
		switch e.GetType() {
		case pb.EntryNormal:
			n.applyNormal(e)
		case pb.EntryConfChange:
			if err := n.applyConfChange(e); err != nil {
				return err
			}
		default:
			// This package proposes no ConfChangeV2. Apply it as no change,
			// the way etcd declines a change, so raft's bookkeeping moves on.
			n.loop.conf = n.loop.rn.ApplyConfChange(&pb.ConfChange{})
			n.log.Warn("consensus: ignored a ConfChangeV2 entry", "index", e.GetIndex())
		}
		n.loop.applied = e.GetIndex()
	}
	n.settleOverwritten()
	return nil
}

func (n *Node) applyNormal(e *pb.Entry) {
	if len(e.GetData()) == 0 {
		return // the empty entry a new leader appends
	}
	id, cmd, err := decodeEnvelope(e.GetData())
	if err == nil {
		err = n.applyCommand(cmd)
	}
	n.settle(id, e.GetIndex(), err)
}

// applyConfChange applies a conf change entry and the fleet command it
// carries together, or neither: if the command is refused, or the change
// is no longer the one the command needs, raft applies an empty change.
//
// An applied change is followed by a snapshot at its index. Raft refuses
// to restore a snapshot whose ConfState leaves the receiver out, so a node
// joining with an empty log can start only from a snapshot taken after
// its admission; taking one at every change keeps that true (the fleet
// state is small, and changes are rare).
func (n *Node) applyConfChange(e *pb.Entry) error {
	cc := &pb.ConfChange{}
	err := proto.Unmarshal(e.GetData(), cc)
	var id uint64
	var cmd fleet.Command
	if err == nil {
		id, cmd, err = decodeEnvelope(cc.GetContext())
	}
	if err == nil {
		err = checkConfChange(n.State(), cmd, cc)
	}
	if err == nil {
		err = n.applyCommand(cmd)
	}
	if err != nil {
		cc = &pb.ConfChange{}
	}
	n.loop.conf = n.loop.rn.ApplyConfChange(cc)
	n.settle(id, e.GetIndex(), err)
	if err != nil {
		return nil
	}
	return n.snapshot(e.GetIndex())
}

// applyCommand applies cmd to the fleet state and publishes the result.
func (n *Node) applyCommand(cmd fleet.Command) error {
	next, err := fleet.Apply(n.State(), cmd)
	if err != nil {
		return err
	}
	n.state.Store(next)
	if cmd.Kind() == fleet.KindAdmit || cmd.Kind() == fleet.KindForget {
		n.afterMembership()
	}
	return nil
}

// checkConfChange holds a conf change entry to the change its command
// needs against the state it is applied to.
func checkConfChange(st *fleet.State, cmd fleet.Command, cc *pb.ConfChange) error {
	if err := fleet.Validate(st, cmd); err != nil {
		return err
	}
	want, ok := fleet.Membership(st, cmd)
	if !ok || cc.GetNodeId() != want.RaftID || cc.GetType() != confChangeType(want.Op) {
		return fmt.Errorf("%w: the entry changes raft id %x by %s, which is not the change %s needs now", fleet.ErrInvalidChange, cc.GetNodeId(), cc.GetType(), cmd.Kind())
	}
	return nil
}

func confChangeType(op fleet.ChangeOp) pb.ConfChangeType {
	switch op {
	case fleet.AddVoter:
		return pb.ConfChangeAddNode
	case fleet.Remove:
		return pb.ConfChangeRemoveNode
	}
	return pb.ConfChangeAddLearnerNode
}

// afterMembership keeps the formation record's mode in step with this
// node's seat: a founder whose cluster grew is a voter; a learner promoted
// is a voter; a voter demoted is a learner. Other transitions (pending,
// leaving a fleet) belong to formation.
func (n *Node) afterMembership() {
	self, ok := n.State().Member(n.cfg.NodeID)
	if !ok {
		return
	}
	mode := n.loop.form.Mode
	switch {
	case self.Seat == fleet.Learner && (mode == Voter || mode == Solitary):
		mode = Learner
	case self.Seat == fleet.Voter && mode == Learner:
		mode = Voter
	case self.Seat == fleet.Voter && mode == Solitary && n.State().Len() > 1:
		mode = Voter
	}
	if mode == n.loop.form.Mode {
		return
	}
	next := Formation{Mode: mode, ClusterID: n.loop.form.ClusterID, CreatedAt: n.loop.form.CreatedAt}
	if err := WriteFormation(n.cfg.StateDir, next); err != nil {
		n.log.Error("consensus: recording the new mode", "mode", mode, "err", err)
		return
	}
	n.log.Info("consensus: mode changed", "from", n.loop.form.Mode, "to", mode)
	n.loop.form = next
}
