package consensus

import (
	"errors"
	"fmt"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/tracker"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// ErrUnsafeChange: a membership change the leader refuses because it would leave the cluster
// without a quorum it can reach (pace-consensus §7.1): a promotion of a member that is not
// connected or not caught up, or a removal or demotion that leaves too few reachable voters.
var ErrUnsafeChange = errors.New("membership change refused: it would leave no reachable quorum")

// checkQuorumAfter judges a configuration change on the leader's view of its peers: the
// voters the change leaves must include a majority this leader hears from, and a member
// becoming a voter must be heard from and hold every committed entry. Called on the loop.
func (n *Node) checkQuorumAfter(change fleet.Change) error {
	st := n.loop.rn.Status()
	if change.Op == fleet.AddVoter {
		if why := n.notCaughtUp(st, change.RaftID); why != "" {
			return fmt.Errorf("%w: %s cannot become a voter yet: %s; it stays a learner until it is", ErrUnsafeChange, change.ID, why)
		}
	}
	voters := map[uint64]bool{}
	for _, v := range n.loop.conf.GetVoters() {
		voters[v] = true
	}
	before := len(voters)
	switch change.Op {
	case fleet.AddVoter:
		voters[change.RaftID] = true
	case fleet.AddLearner, fleet.Remove:
		delete(voters, change.RaftID) // a demotion or a removal; nothing for a new learner
	}
	if len(voters) == before {
		return nil // the voters stay as they are: the quorum is the one in force
	}
	reachable := 0
	for v := range voters {
		if v == n.id || n.heardRecently(v) {
			reachable++
		}
	}
	if len(voters) == 0 || reachable < len(voters)/2+1 {
		return fmt.Errorf("%w: after it %d voter(s) would remain, %d of them reachable from the leader, and a quorum needs %d",
			ErrUnsafeChange, len(voters), reachable, len(voters)/2+1)
	}
	return nil
}

// notCaughtUp says why raft id is not yet fit to vote, or "".
func (n *Node) notCaughtUp(st raft.Status, id uint64) string {
	pr, ok := st.Progress[id]
	switch {
	case !ok:
		return "the leader tracks no progress for it"
	case !n.heardRecently(id):
		return "the leader has not heard from it lately (is its consensus session up?)"
	case pr.State != tracker.StateReplicate || pr.Match < st.GetCommit():
		return fmt.Sprintf("it holds entries up to %d of the %d committed", pr.Match, st.GetCommit())
	}
	return ""
}

// heardRecently reports whether a message from raft id arrived within the last election
// timeout. Raft's own RecentActive is reset at every election timeout and is briefly false
// for every peer then, which would refuse a safe change that happened to be judged at that
// tick; this keeps its own record of the tick each peer was last heard at.
func (n *Node) heardRecently(id uint64) bool {
	at, ok := n.loop.heardAt[id]
	return ok && n.loop.ticks-at <= uint64(n.cfg.ElectionTicks)
}

// promotionRecheck is how often the leader looks for learners admitted as voters that have
// caught up, and promotionWarnAfter how long one may wait before it warns again.
const (
	promotionRecheck   = 20 // ticks: once a second at the default tick
	promotionWarnAfter = 30 * time.Second
)

// promoteCaughtUp, on the leader, promotes one learner that was admitted as a voter once it is
// connected and holds every committed entry (pace-consensus §7.1). It proposes nothing while
// another membership change is in flight. Called on the loop after ticks.
func (n *Node) promoteCaughtUp() {
	n.loop.ticksSincePromotion++
	if n.loop.ticksSincePromotion < promotionRecheck || !n.IsLeader() || n.membershipPending() {
		return
	}
	n.loop.ticksSincePromotion = 0
	st := n.loop.rn.Status()
	for _, m := range n.State().Members() {
		if !m.PromotionPending {
			continue
		}
		if why := n.notCaughtUp(st, fleet.RaftID(m.ID)); why != "" {
			n.notePromotionWait(m.ID, why)
			continue
		}
		cmd := fleet.Admit{ID: m.ID, Seat: fleet.Voter, RaftEndpoint: m.RaftEndpoint}
		n.propose(&proposal{id: n.propSeq.Add(1), cmd: cmd, done: make(chan error, 1)})
		n.log.Info("consensus: promoting a caught-up member to voter", "member", m.ID)
		delete(n.loop.promotionWaits, m.ID)
		return // one change at a time
	}
}

// notePromotionWait logs a waiting promotion once, and again at WARN after
// promotionWarnAfter.
func (n *Node) notePromotionWait(id, why string) {
	now := n.cfg.Now()
	if n.loop.promotionWaits == nil {
		n.loop.promotionWaits = map[string]time.Time{}
	}
	since, seen := n.loop.promotionWaits[id]
	switch {
	case !seen:
		n.loop.promotionWaits[id] = now
		n.log.Info("consensus: a member admitted as voter waits to be promoted", "member", id, "why", why)
	case now.Sub(since) >= promotionWarnAfter:
		n.loop.promotionWaits[id] = now
		n.log.Warn("consensus: a member admitted as voter is still not caught up", "member", id, "why", why)
	}
}
