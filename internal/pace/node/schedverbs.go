package node

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof/sealedconn"
	"github.com/buildfleet/buildfleet/internal/pace/scheduler"
	"github.com/buildfleet/buildfleet/internal/pace/thismachine"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// scheduler answers the scheduler family: only the leader does; the joining verbs need a proven
// key, LEASE/RELEASE an admitted caller, and the cluster-deciding verbs operator standing from
// an identified caller.
func (n *Node) scheduler(ctx context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	if !n.cons.IsLeader() {
		return n.notLeader()
	}
	switch req.Op() {
	case wire.OpRegister, wire.OpHeartbeat, wire.OpWithdraw, wire.OpNodeAnnounce:
		return n.joining(ctx, c, req)
	case wire.OpClusterSet, wire.OpClusterForget, wire.OpClusterAdmit, wire.OpClusterAdmitLearner:
		return n.clusterChange(ctx, c, req)
	}
	if v := n.admit(c); !v.Admitted {
		n.counters.requestsRefusedNotAMember.Add(1)
		return n.notAMember(v)
	}
	if req.Op() == wire.OpClusterStatus {
		return frameserver.Ok([]byte(n.clusterStatus()))
	}
	return n.schedulerServe(c, req, scheduler.Caller{})
}

func (n *Node) notLeader() frameserver.Reply {
	endpoint := ""
	if id, ok := n.cons.Leader(); ok {
		if m, ok := n.cons.State().Member(id); ok {
			endpoint = m.SchedulerEndpoint
		}
	}
	return frameserver.Refuse(wire.Refusal{Code: wire.CodeNotLeader, Message: endpoint})
}

// joining serves REGISTER, HEARTBEAT, WITHDRAW and NODE-ANNOUNCE to a connection that proved
// a live roster key (loopback included: pace-node §8.3). An announcement the scheduler took is
// then recorded in the fleet where it moves the member (pace-consensus §7.4).
func (n *Node) joining(ctx context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	peer, err := n.state(c).proof.Proven()
	if err != nil {
		n.sched.Counters().RefusedNodeIdentityRequired.Add(1)
		return sealedconn.RefuseUnproven(err)
	}
	reply := n.schedulerServe(c, req, scheduler.Caller{NodeID: peer.ID, Key: peer.Key})
	if req.Op() != wire.OpNodeAnnounce || reply.Status != wire.StatusOk {
		return reply
	}
	return n.recordMove(ctx, peer.ID, req.Fields)
}

func (n *Node) schedulerServe(c *frameserver.Conn, req *frameserver.Request, caller scheduler.Caller) frameserver.Reply {
	if a, ok := thismachine.PeerAddr(c.RemoteAddr()); ok {
		caller.Addr = a.Unmap()
	} else {
		caller.Addr = netip.Addr{}
	}
	if req.Op() == wire.OpLease {
		n.dropForgottenWorkers() // a forget reaches the very next grant
	}
	body, err := n.sched.Serve(nil, req.Op(), req.Fields, caller, n.params())
	if err != nil {
		ref, _ := scheduler.RefusalOf(err)
		return frameserver.Refuse(ref)
	}
	return frameserver.Ok(body)
}

// dropForgottenWorkers removes the registrations of machines the cluster forgot.
func (n *Node) dropForgottenWorkers() {
	st := n.cons.State()
	if dropped := n.sched.DropRevoked(func(key []byte) bool { return st.Revoked(key) }); dropped > 0 {
		n.log.Warn("dropped the registrations of a machine the cluster forgot", "registrations", dropped)
	}
}

func (n *Node) params() scheduler.Params {
	st := n.cons.State()
	return scheduler.Params{Epoch: n.cons.Status().Term, LeaseLifetime: st.Settings().LeaseLifetime, ClusterID: st.ClusterID()}
}

// clusterChange proposes CLUSTER-SET, -FORGET, -ADMIT and -ADMIT-LEARNER and answers once the
// entry applied.
func (n *Node) clusterChange(ctx context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	if reply, ok := n.operatorGate(c, &n.counters.requestsRefusedNotAMember, &n.sched.Counters().RefusedIdentifiedCallerRequired); !ok {
		return reply
	}
	cmd, err := clusterCommand(req.Op(), req.Fields)
	if err != nil {
		return frameserver.Refuse(wire.Refuse(wire.CodeMalformedFrame, "%v", err))
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := n.cons.Propose(ctx, cmd); err != nil {
		return frameserver.Refuse(proposalRefusal(err))
	}
	return frameserver.Ok(receipt(cmd))
}

func clusterCommand(op wire.Op, f [][]byte) (fleet.Command, error) {
	switch op {
	case wire.OpClusterSet:
		return fleet.Set{Name: string(f[0]), Value: string(f[1])}, nil
	case wire.OpClusterForget:
		return fleet.Forget{ID: string(f[0])}, nil
	}
	seat := fleet.Voter
	if op == wire.OpClusterAdmitLearner {
		seat = fleet.Learner
	}
	a := fleet.Admit{ID: string(f[0]), Seat: seat, RaftEndpoint: string(f[1])}
	if len(f[2]) > 0 {
		key, err := edkey.Parse(string(f[2]))
		if err != nil {
			return nil, err
		}
		a.Key = key
	}
	return a, nil
}

func proposalRefusal(err error) wire.Refusal {
	var nl *consensus.NotLeaderError
	switch {
	case errors.As(err, &nl):
		return wire.Refusal{Code: wire.CodeNotLeader, Message: nl.SchedulerEndpoint}
	case errors.Is(err, fleet.ErrNotNeeded):
		return wire.Refuse(wire.CodeClusterChangeNotNeeded, "%v", err)
	case errors.Is(err, consensus.ErrMembershipBusy):
		return wire.Refuse(wire.CodeClusterChangeInFlight, "%v", err)
	}
	return wire.Refuse(wire.CodeInvalidClusterChange, "%v", err)
}

// receipt is the Ok body of a cluster change: for an admission exactly `[id][endpoint][key
// text or empty]` (pace-wire §1.13), otherwise one text field saying what was recorded.
func receipt(cmd fleet.Command) []byte {
	if a, ok := cmd.(fleet.Admit); ok {
		key := ""
		if a.Key != nil {
			key = edkey.Text(a.Key)
		}
		return wire.AppendStringField(wire.AppendStringField(wire.AppendStringField(nil, a.ID), a.RaftEndpoint), key)
	}
	return wire.AppendStringField(nil, describe(cmd))
}

// describe says what a committed change did, for the operator's receipt.
func describe(cmd fleet.Command) string {
	switch c := cmd.(type) {
	case fleet.Set:
		return fmt.Sprintf("set %s=%s", c.Name, c.Value)
	case fleet.Forget:
		return fmt.Sprintf("forgot member %s and revoked the key it held", c.ID)
	}
	return fmt.Sprintf("applied %T", cmd)
}

// clusterStatus renders CLUSTER-STATUS: members, settings, and every settable key.
func (n *Node) clusterStatus() string {
	st, cs := n.cons.State(), n.cons.Status()
	var b strings.Builder
	fmt.Fprintf(&b, "cluster %s  term %d  commit %d  leader %s\n\nmembers:\n", st.ClusterID(), cs.Term, cs.CommitIndex, cs.LeaderID)
	for _, m := range st.Members() {
		seat := map[fleet.Seat]string{fleet.Voter: "voter", fleet.Learner: "learner"}[m.Seat]
		fmt.Fprintf(&b, "  %-24s %-8s raft %-21s node %-21s key %s\n", m.ID, seat, orDefault(m.RaftEndpoint, "-"),
			orDefault(m.NodeEndpoint, "- (never-announced)"), edkey.Text(m.Key))
	}
	s := st.Settings()
	fmt.Fprintf(&b, "\nsettings:\n  %s=%v\n  %s=%s\n", fleet.SettingFleetOpen, s.FleetOpen, fleet.SettingLeaseLifetime, s.LeaseLifetime)
	return b.String()
}
