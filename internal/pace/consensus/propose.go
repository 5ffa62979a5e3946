package consensus

import (
	"context"
	"fmt"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// proposal is one Propose call waiting for its entry.
type proposal struct {
	id    uint64
	cmd   fleet.Command
	index uint64     // log index once appended; 0 before
	done  chan error // buffered: the loop never blocks on a caller that left
}

// Propose proposes cmd and waits until it is applied. A node that does not
// lead answers a *NotLeaderError; on the leader, a command the current
// state refuses is answered at once with that refusal (fleet.ErrInvalidChange
// or fleet.ErrNotNeeded), before anything is proposed. A command
// that changes a seat is proposed as a Raft configuration change, one at a
// time (ErrMembershipBusy). If ctx ends first the outcome is unknown: the
// entry may still apply.
func (n *Node) Propose(ctx context.Context, cmd fleet.Command) error {
	select {
	case <-n.done:
		return n.stoppedErr()
	default:
	}
	if !n.IsLeader() {
		return n.notLeader() // a follower's state may lag; the leader judges
	}
	if err := fleet.Validate(n.State(), cmd); err != nil {
		return err
	}
	p := &proposal{id: n.propSeq.Add(1), cmd: cmd, done: make(chan error, 1)}
	select {
	case n.props <- p:
	case <-n.done:
		return n.stoppedErr()
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-p.done:
		return err
	case <-n.done:
		return n.stoppedErr()
	case <-ctx.Done():
		return fmt.Errorf("consensus: proposal outcome unknown: %w", ctx.Err())
	}
}

// propose hands p to raft on the loop goroutine.
func (n *Node) propose(p *proposal) {
	if !n.IsLeader() {
		p.done <- n.notLeader()
		return
	}
	data := encodeEnvelope(p.id, p.cmd)
	var err error
	if change, ok := fleet.Membership(n.State(), p.cmd); ok {
		if n.membershipPending() {
			p.done <- ErrMembershipBusy
			return
		}
		if err := n.checkQuorumAfter(change); err != nil {
			p.done <- err
			return
		}
		err = n.loop.rn.ProposeConfChange(&pb.ConfChange{Type: confChangeType(change.Op).Enum(), NodeId: new(change.RaftID), Context: data})
	} else {
		err = n.loop.rn.Propose(data)
	}
	if err != nil {
		p.done <- fmt.Errorf("%w: %v", ErrProposalDropped, err)
		return
	}
	n.loop.pending[p.id] = p
	n.loop.unappended = append(n.loop.unappended, p)
}

func (n *Node) membershipPending() bool {
	for _, p := range n.loop.pending {
		if _, ok := fleet.Membership(n.State(), p.cmd); ok {
			return true
		}
	}
	return false
}

// noteAppended finds where this Ready appended the proposals made since
// the last one. A proposal that is not there was replaced by raft (it
// drops a configuration change while another is unapplied) and will never
// apply.
func (n *Node) noteAppended(ents []*pb.Entry) {
	if len(n.loop.unappended) == 0 {
		return
	}
	at := map[uint64]uint64{}
	for _, e := range ents {
		if id := proposalIDOf(e); id != 0 {
			at[id] = e.GetIndex()
		}
	}
	for _, p := range n.loop.unappended {
		if idx, ok := at[p.id]; ok {
			p.index = idx
			continue
		}
		delete(n.loop.pending, p.id)
		p.done <- fmt.Errorf("%w: raft set it aside (a configuration change is still being applied)", ErrProposalDropped)
	}
	n.loop.unappended = n.loop.unappended[:0]
}

func proposalIDOf(e *pb.Entry) uint64 {
	data := e.GetData()
	if e.GetType() == pb.EntryConfChange {
		cc := &pb.ConfChange{}
		if proto.Unmarshal(data, cc) != nil {
			return 0
		}
		data = cc.GetContext()
	}
	id, _, _ := decodeEnvelope(data)
	return id
}

// settle answers the proposal with id, if this node made it.
func (n *Node) settle(id, index uint64, err error) {
	p, ok := n.loop.pending[id]
	if id == 0 || !ok {
		if err != nil {
			n.log.Info("consensus: entry refused", "index", index, "err", err)
		}
		return
	}
	delete(n.loop.pending, id)
	p.done <- err
}

// settleOverwritten fails proposals whose index was applied with another
// entry: a new leader replaced them.
func (n *Node) settleOverwritten() {
	for id, p := range n.loop.pending {
		if p.index != 0 && p.index <= n.loop.applied {
			delete(n.loop.pending, id)
			p.done <- ErrProposalLost
		}
	}
}

func (n *Node) failPending() {
	for id, p := range n.loop.pending {
		delete(n.loop.pending, id)
		p.done <- n.stoppedErr()
	}
}

// notLeader names the leader and its scheduler endpoint when known.
func (n *Node) notLeader() error {
	e := &NotLeaderError{}
	if id, ok := n.Leader(); ok {
		e.LeaderID = id
		if m, ok := n.State().Member(id); ok {
			e.SchedulerEndpoint = m.SchedulerEndpoint
		}
	}
	return e
}
