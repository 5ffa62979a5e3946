package consensus

import (
	"fmt"
	"math"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// loopState belongs to the loop goroutine alone.
type loopState struct {
	rn            *raft.RawNode
	form          Formation
	conf          *pb.ConfState // in force at applied
	applied       uint64
	snapIndex     uint64
	openCommit    uint64 // the commit index raft.db held at Open
	caughtUp      bool
	pending       map[uint64]*proposal // by proposal id, until applied, lost or stopped
	unappended    []*proposal          // proposed since the last Ready
	announcedTerm uint64               // the term in which this leader last announced itself
	campaigned    bool                 // the one campaign a sole voter starts once it has caught up

	ticksSincePromotion int                  // safety.go: promotions are looked for every promotionRecheck ticks
	promotionWaits      map[string]time.Time // member id -> when its wait was last logged
	ticks               uint64               // ticks since the loop started
	heardAt             map[uint64]uint64    // raft id -> the tick its last message arrived at
}

// raftMaxMsgSize and raftMaxUncommitted bound what one append carries and
// what a leader holds uncommitted; the log carries configuration only.
const (
	raftMaxMsgSize     = 1 << 20
	raftMaxInflight    = 256
	raftMaxUncommitted = 4 << 20
)

// initLoop restores the fleet state from the latest snapshot and builds the
// RawNode over the store; committed entries after the snapshot are replayed
// by the loop as raft hands them back.
func (n *Node) initLoop(form Formation) error {
	snap, err := n.store.Snapshot()
	if err != nil {
		return fmt.Errorf("consensus: %w", err)
	}
	state := fleet.New()
	if !raft.IsEmptySnap(snap) {
		if state, err = fleet.DecodeSnapshot(snap.GetData()); err != nil {
			return fmt.Errorf("consensus: snapshot at %d in %s: %w", snap.GetMetadata().GetIndex(), n.store.Path(), err)
		}
	}
	n.state.Store(state)
	_, cs, _ := n.store.InitialState()
	applied := snap.GetMetadata().GetIndex()
	rn, err := raft.NewRawNode(&raft.Config{
		ID:                        n.id,
		ElectionTick:              n.cfg.ElectionTicks,
		HeartbeatTick:             n.cfg.HeartbeatTicks,
		Storage:                   n.store,
		Applied:                   applied,
		MaxSizePerMsg:             raftMaxMsgSize,
		MaxInflightMsgs:           raftMaxInflight,
		MaxUncommittedEntriesSize: raftMaxUncommitted,
		CheckQuorum:               true,
		PreVote:                   true,
		DisableProposalForwarding: true, // only the leader proposes; others answer not-leader
		StepDownOnRemoval:         true, // a forgotten leader steps down once its removal commits
		Logger:                    raftLogger{n.log},
	})
	if err != nil {
		return fmt.Errorf("consensus: %w", err)
	}
	n.loop = loopState{
		rn: rn, form: form, conf: cs, applied: applied, snapIndex: applied,
		openCommit: n.store.HardState().GetCommit(), pending: map[uint64]*proposal{},
	}
	n.publishStatus()
	return nil
}

// soleVoter reports whether the ConfState in force names this node alone.
func (n *Node) soleVoter() bool {
	cs := n.loop.conf
	return len(cs.GetVoters()) == 1 && cs.GetVoters()[0] == n.id && len(cs.GetVotersOutgoing()) == 0
}

// run is the loop: handle every Ready, then wait for one event.
func (n *Node) run() {
	defer close(n.done)
	defer n.failPending()
	for {
		if err := n.catchUp(); err != nil {
			n.fail(err)
			return
		}
		select {
		case <-n.stopc:
			return
		case <-n.cfg.Ticks:
			n.loop.ticks++
			n.loop.rn.Tick()
			n.promoteCaughtUp()
		case m := <-n.inbox:
			n.stepInbound(m)
		case p := <-n.props:
			n.propose(p)
		case fn := <-n.calls:
			fn()
			if n.Err() != nil {
				return // the call failed the node (a join that could not finish)
			}
		}
	}
}

func (n *Node) drainReady() error {
	for n.loop.rn.HasReady() {
		if err := n.handleReady(n.loop.rn.Ready()); err != nil {
			return err
		}
	}
	return nil
}

// handleReady: persist → send → apply → Advance, then snapshot if due. A
// snapshot from the leader is decoded before it is persisted, so one this
// build cannot read stops the loop without poisoning raft.db.
func (n *Node) handleReady(rd raft.Ready) error {
	var restored *fleet.State
	if !raft.IsEmptySnap(rd.Snapshot) {
		st, err := fleet.DecodeSnapshot(rd.Snapshot.GetData())
		if err != nil {
			return fmt.Errorf("consensus: snapshot at %d from the leader: %w", rd.Snapshot.GetMetadata().GetIndex(), err)
		}
		restored = st
	}
	if err := n.store.Save(rd.HardState, rd.Entries, rd.Snapshot); err != nil {
		return err
	}
	if restored != nil {
		n.restore(rd.Snapshot, restored)
	}
	if len(rd.Messages) > 0 {
		n.cfg.Transport.Send(rd.Messages)
	}
	n.noteAppended(rd.Entries)
	if err := n.applyEntries(rd.CommittedEntries); err != nil {
		return err
	}
	n.loop.rn.Advance(rd)
	if n.loop.applied-n.loop.snapIndex >= n.cfg.SnapshotEvery {
		if err := n.snapshot(n.loop.applied); err != nil {
			return err
		}
	}
	n.publishStatus()
	n.maybeAnnounce()
	return nil
}

// restore replaces the fleet state with a snapshot the leader sent.
func (n *Node) restore(snap *pb.Snapshot, state *fleet.State) {
	n.state.Store(state)
	n.loop.conf = snap.GetMetadata().GetConfState()
	n.loop.applied = snap.GetMetadata().GetIndex()
	n.loop.snapIndex = n.loop.applied
	n.afterMembership()
	n.log.Info("consensus: restored a snapshot from the leader", "index", n.loop.applied, "state", state.String())
}

// snapshot records the fleet state as of applied index i (which the
// caller has just applied) and compacts the log, keeping SnapshotCatchUp
// entries behind the snapshot for followers slightly behind.
func (n *Node) snapshot(i uint64) error {
	if i <= n.loop.snapIndex {
		return nil
	}
	if _, err := n.store.CreateSnapshot(i, n.loop.conf, fleet.EncodeSnapshot(n.State())); err != nil {
		return err
	}
	n.loop.snapIndex = i
	first, _ := n.store.FirstIndex()
	if i > n.cfg.SnapshotCatchUp {
		if to := i - n.cfg.SnapshotCatchUp; to >= first {
			return n.store.Compact(to)
		}
	}
	return nil
}

// catchUp handles every Ready, and once the log recovered at Open is
// applied: a node that is its cluster's only voter campaigns at once (a
// cluster of one need not wait out an election timeout), and Open is
// released when it leads (or at once for any other node). Campaigning only
// after the replay matters: raft refuses to campaign while committed
// configuration changes are unapplied.
func (n *Node) catchUp() error {
	if err := n.drainReady(); err != nil {
		return err
	}
	if n.loop.caughtUp || n.loop.applied < n.loop.openCommit {
		return nil
	}
	if n.soleVoter() && !n.IsLeader() {
		if n.loop.campaigned {
			return nil // the election timeout will try again
		}
		n.loop.campaigned = true
		if err := n.loop.rn.Campaign(); err != nil {
			return fmt.Errorf("consensus: campaign: %w", err)
		}
		if err := n.drainReady(); err != nil || !n.IsLeader() {
			return err
		}
	}
	n.loop.caughtUp = true
	close(n.caughtUp)
	return nil
}

// stepInbound steps a peer's message and notes contact with the leader.
func (n *Node) stepInbound(m *pb.Message) {
	if n.loop.heardAt == nil {
		n.loop.heardAt = map[uint64]uint64{}
	}
	n.loop.heardAt[m.GetFrom()] = n.loop.ticks
	if err := n.loop.rn.Step(m); err != nil {
		n.log.Debug("consensus: message not stepped", "type", m.GetType().String(), "from", fmt.Sprintf("%x", m.GetFrom()), "err", err)
		return
	}
	switch m.GetType() {
	case pb.MsgApp, pb.MsgHeartbeat, pb.MsgSnap:
		if lead := n.loop.rn.BasicStatus().Lead; lead != 0 && m.GetFrom() == lead {
			n.contact.Store(n.cfg.Now().UnixNano())
		}
	}
}

// publishStatus refreshes what readers on other goroutines see.
func (n *Node) publishStatus() {
	bs := n.loop.rn.BasicStatus()
	n.leadID.Store(bs.Lead)
	st := n.State()
	members := make([]MemberSeat, 0, st.Len())
	for _, m := range st.Members() {
		members = append(members, MemberSeat{ID: m.ID, Seat: m.Seat})
	}
	leader := ""
	if m, ok := st.MemberByRaftID(bs.Lead); ok && bs.Lead != 0 {
		leader = m.ID
	}
	n.status.Store(&Status{
		ClusterID: n.loop.form.ClusterID, NodeID: n.cfg.NodeID, RaftID: n.id, Mode: n.loop.form.Mode, CreatedAt: n.loop.form.CreatedAt,
		Role: roleOf(bs.RaftState), Term: bs.GetTerm(), CommitIndex: bs.GetCommit(), AppliedIndex: n.loop.applied,
		LeaderID: leader, Members: members,
	})
}

// maybeAnnounce: once per term in which it leads, a node records its own
// endpoints as they are now (its scheduler endpoint among them) if the state
// lacks them.
func (n *Node) maybeAnnounce() {
	bs := n.loop.rn.BasicStatus()
	if bs.RaftState != raft.StateLeader || n.loop.announcedTerm == bs.GetTerm() {
		return
	}
	n.loop.announcedTerm = bs.GetTerm()
	st := n.State()
	self, ok := st.Member(n.cfg.NodeID)
	if !ok || self.AnnounceSeq == math.MaxUint64 {
		return
	}
	raftEP, nodeEP := n.cfg.Endpoints()
	if recordedAs(self, raftEP, nodeEP) {
		return // nothing new to record
	}
	// Wall-clock nanoseconds order announcements across restarts; the
	// recorded sequence + 1 keeps them increasing if the clock steps back.
	// The node numbers its own statements the same way (pace-consensus §7.4).
	seq := max(self.AnnounceSeq+1, uint64(max(n.cfg.Now().UnixNano(), 0)))
	cmd := fleet.Announce{ID: n.cfg.NodeID, Seq: seq, RaftEndpoint: raftEP, NodeEndpoint: nodeEP, SchedulerEndpoint: nodeEP}
	if fleet.Validate(st, cmd) != nil {
		return
	}
	if err := n.loop.rn.Propose(encodeEnvelope(0, cmd)); err != nil {
		n.log.Debug("consensus: announcement not proposed", "err", err)
	}
}

// recordedAs reports whether m already records what a leader announces of
// itself: an empty endpoint leaves the recorded one, as Apply does.
func recordedAs(m fleet.Member, raftEP, nodeEP string) bool {
	return (raftEP == "" || m.RaftEndpoint == raftEP) && (nodeEP == "" || m.NodeEndpoint == nodeEP && m.SchedulerEndpoint == nodeEP)
}
