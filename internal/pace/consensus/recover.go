package consensus

import (
	"context"
	"fmt"
	"slices"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// RecoverReport says what Recover rewrote.
type RecoverReport struct {
	ClusterID string
	Forgotten []string // members removed, their keys revoked
	Demoted   []string // other voters, kept as learners
	Index     uint64   // the index of the recovery snapshot
	Term      uint64
}

// Recover is the offline recovery of a cluster that lost its quorum for good
// (pace-consensus §7.7): with the node stopped (raft.db's lock refuses a running one), it re-founds the cluster
// from this node's applied state with this node as its only voter. The members named in forget
// are removed and their keys revoked, as a --cluster-forget would; every other voter stays a
// member as a learner, so it rejoins when its sessions come back and can be promoted again. The
// cluster id, the settings and every key stay.
//
// The rewrite is one raft.db transaction: a snapshot one index past anything the log held, at
// a term above any this node saw, naming the new configuration, which replaces the log. Use
// it only once the other voters are gone or stopped: a voter that comes back still holding the
// old configuration could elect a leader of its own with the others it knew.
func Recover(ctx context.Context, cfg Config, forget []string) (RecoverReport, error) {
	cfg.Transport = NoTransport{}
	cfg.Ticks = make(chan time.Time) // never ticks: nobody campaigns while the log replays
	n, err := Open(ctx, cfg)
	if err != nil {
		return RecoverReport{}, err
	}
	defer n.Stop()
	var rep RecoverReport
	if cerr := n.call(ctx, func() { rep, err = n.refound(forget) }); cerr != nil {
		return rep, cerr
	}
	return rep, err
}

// refound rewrites the store on the loop goroutine; the caller stops the node after it.
func (n *Node) refound(forget []string) (RecoverReport, error) {
	state, rep, err := n.recoveredState(forget)
	if err != nil {
		return rep, err
	}
	cs := &pb.ConfState{Voters: []uint64{n.id}}
	for _, m := range state.Members() {
		if m.ID != n.cfg.NodeID {
			cs.Learners = append(cs.Learners, m.RaftID())
		}
	}
	hs := n.store.HardState()
	last, _ := n.store.LastIndex()
	rep.Index, rep.Term = max(last, hs.GetCommit())+1, hs.GetTerm()+1
	snap := &pb.Snapshot{Data: fleet.EncodeSnapshot(state), Metadata: &pb.SnapshotMetadata{
		ConfState: cs, Index: new(rep.Index), Term: new(rep.Term)}}
	if err := n.store.Save(&pb.HardState{Term: new(rep.Term), Vote: new(n.id), Commit: new(rep.Index)}, nil, snap); err != nil {
		return rep, fmt.Errorf("consensus: writing the recovery snapshot: %w", err)
	}
	form := n.loop.form
	form.Mode = Voter
	return rep, WriteFormation(n.cfg.StateDir, form)
}

// recoveredState is the applied state with forget removed, the other voters demoted and this
// node a voter.
func (n *Node) recoveredState(forget []string) (*fleet.State, RecoverReport, error) {
	state := n.State()
	rep := RecoverReport{ClusterID: state.ClusterID()}
	self := n.cfg.NodeID
	if _, ok := state.Member(self); !ok {
		return nil, rep, fmt.Errorf("%w: this node (%s) is not a member of the state it holds; there is nothing to recover from", ErrStateDir, self)
	}
	var err error
	for _, id := range forget {
		if id == self {
			return nil, rep, fmt.Errorf("consensus: recovery keeps this node (%s); it cannot forget it", self)
		}
		if state, err = fleet.Apply(state, fleet.Forget{ID: id}); err != nil {
			return nil, rep, fmt.Errorf("consensus: forgetting %s: %w", id, err)
		}
		rep.Forgotten = append(rep.Forgotten, id)
	}
	for _, m := range state.Members() {
		seat := fleet.Learner
		if m.ID == self {
			seat = fleet.Voter
		} else if m.Seat == fleet.Voter {
			rep.Demoted = append(rep.Demoted, m.ID)
		}
		if m.Seat != seat || m.PromotionPending {
			if state, err = fleet.Apply(state, fleet.Admit{ID: m.ID, Seat: seat, RaftEndpoint: m.RaftEndpoint}); err != nil {
				return nil, rep, fmt.Errorf("consensus: re-seating %s: %w", m.ID, err)
			}
		}
	}
	slices.Sort(rep.Demoted)
	return state, rep, nil
}
