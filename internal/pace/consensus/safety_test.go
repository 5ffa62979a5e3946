package consensus

import (
	"errors"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// The way a fleet lost its quorum for good: a learner that never connects, then admitted as a
// voter. The promotion is refused with the reason, the cluster keeps committing, and the
// member can still be forgotten.
func TestPromotingAMemberThatNeverConnectedIsRefused(t *testing.T) {
	p := newPair(t)
	n1 := p.n1
	if err := n1.Propose(ctxT(t), fleet.Admit{ID: "ghost", Seat: fleet.Learner, RaftEndpoint: "10.0.0.9:6680", Key: testKey(9)}); err != nil {
		t.Fatal(err)
	}
	err := n1.Propose(ctxT(t), fleet.Admit{ID: "ghost", Seat: fleet.Voter, RaftEndpoint: "10.0.0.9:6680"})
	if !errors.Is(err, ErrUnsafeChange) || !strings.Contains(err.Error(), "ghost cannot become a voter yet") {
		t.Fatalf("promoting a member that never connected: %v", err)
	}
	if seatOf(n1, "ghost") != fleet.Learner {
		t.Fatal("the refused promotion changed the seat")
	}
	p.propose(t, fleet.Set{Name: fleet.SettingLeaseLifetime, Value: "2min"}) // still commits
	p.propose(t, fleet.Forget{ID: "ghost"})
	if _, ok := n1.State().Member("ghost"); ok {
		t.Fatal("ghost was not forgotten")
	}
}

// A member admitted as a voter sits as a learner until it is connected and caught up, then the
// leader promotes it by itself.
func TestAMemberAdmittedAsVoterIsPromotedOnceCaughtUp(t *testing.T) {
	p := newPair(t)
	if err := p.n1.Propose(ctxT(t), fleet.Admit{ID: "n2", Seat: fleet.Voter, RaftEndpoint: p.n2.cfg.RaftEndpoint, Key: testKey(2)}); err != nil {
		t.Fatal(err)
	}
	if m, _ := p.n1.State().Member("n2"); m.Seat != fleet.Learner || !m.PromotionPending {
		t.Fatalf("admitted as voter: %+v; want a learner with a promotion pending", m)
	}
	waitFor(t, "the leader to promote n2", func() bool { return seatOf(p.n1, "n2") == fleet.Voter && seatOf(p.n2, "n2") == fleet.Voter })
	if m, _ := p.n1.State().Member("n2"); m.PromotionPending {
		t.Fatal("the promotion is still pending after it")
	}
}

// With two voters and the follower cut off, forgetting the leader would leave one voter the
// leader cannot reach: refused. Forgetting the unreachable follower leaves a voter that is
// reachable (the leader itself), and is allowed to be proposed.
func TestAChangeThatLeavesNoReachableQuorumIsRefused(t *testing.T) {
	p := newPair(t)
	joinAsLearner(t, p)
	promote(t, p)
	leader, follower := p.leader(t)
	p.net.setCut(follower.id, true)
	waitFor(t, "the leader to stop hearing the follower", func() bool {
		var active bool
		_ = leader.call(ctxT(t), func() { active = leader.heardRecently(follower.id) })
		return !active
	})
	err := leader.Propose(ctxT(t), fleet.Forget{ID: leader.cfg.NodeID})
	if !errors.Is(err, ErrUnsafeChange) || !strings.Contains(err.Error(), "1 voter(s) would remain, 0 of them reachable") {
		t.Fatalf("forgetting the leader while the other voter is cut off: %v", err)
	}
	var checked error
	_ = leader.call(ctxT(t), func() {
		checked = leader.checkQuorumAfter(fleet.Change{Op: fleet.Remove, ID: follower.cfg.NodeID, RaftID: follower.id})
	})
	if checked != nil {
		t.Errorf("dropping the unreachable voter: %v", checked)
	}
}
