package node

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/enrollment"
	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/thismachine"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// enrollState is the leader's enrollment window (pace-node §9.3), kept for the term it was
// opened in: a leadership change drops the list and ends any automatic window.
type enrollState struct {
	mu     sync.Mutex
	window *enrollment.Window
	term   uint64
	c      enrollCounters
}

// withWindow runs f on this term's window, a fresh one after a leadership change.
func (n *Node) withWindow(f func(w *enrollment.Window)) {
	e := &n.enroll
	e.mu.Lock()
	defer e.mu.Unlock()
	if term := n.cons.Status().Term; e.window == nil || e.term != term {
		e.window, e.term = enrollment.New(rand.Reader, &e.c.window), term
	}
	f(e.window)
}

// enrollment answers the enrollment family: only the leader does.
func (n *Node) enrollment(ctx context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	if b := n.boot.Load(); b != nil && n.cons.Status().Mode == consensus.Pending {
		// A pending node is a pointer to the fleet it asked, not a fleet to join: whoever asks
		// it is sent on to that fleet's leader (pace-node §9.2).
		return frameserver.Refuse(wire.Refusal{Code: wire.CodeNotLeader, Message: b.NodeEndpoint})
	}
	if !n.cons.IsLeader() {
		return n.notLeader()
	}
	if req.Op() == wire.OpEnrollControl {
		return n.enrollControl(ctx, c, req)
	}
	return n.enrollAsk(ctx, c, req)
}

// enrollAsk answers one poll of ENROLL: checked, recorded on the list, answered signed.
func (n *Node) enrollAsk(ctx context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	ask, unsigned, err := verbs.ParseEnroll(req.Fields)
	if err != nil {
		return n.enrollMalformed(err)
	}
	st := n.cons.State()
	switch {
	case !identity.Verify(ask.Key, ask.Signature, wire.LabelEnrollRequest, unsigned):
		n.enroll.c.refusedForged.Add(1)
		n.log.Warn("an enrollment request whose signature does not verify", "from", c.RemoteAddr())
		return frameserver.Refuse(wire.Refuse(wire.CodeNodeProofRejected, "the request's signature does not verify under the key it names"))
	case st.Revoked(ask.Key):
		n.enroll.c.refusedRevoked.Add(1)
		return frameserver.Refuse(wire.Refuse(wire.CodeNodeKeyRevoked, "this key was revoked by the cluster; a forgotten machine asks under a new key"))
	}
	if m, ok := st.Member(ask.NodeID); ok {
		if !bytes.Equal(m.Key, ask.Key) {
			return frameserver.Refuse(wire.Refuse(wire.CodeInvalidClusterChange, "%s is already a member of this fleet under another key; ask under another --node-id", ask.NodeID))
		}
		return n.enrollAnswer(ask, verbs.EnrollApproved, nil) // recorded already: the roster straight away
	}
	var ans enrollment.Answer
	host, _ := thismachine.PeerAddr(c.RemoteAddr())
	n.withWindow(func(w *enrollment.Window) {
		ans, err = w.Ask(enrollment.Ask{ID: ask.NodeID, NodeEndpoint: ask.NodeEndpoint, RaftEndpoint: ask.RaftEndpoint,
			Key: ask.Key, Challenge: ask.Challenge, Host: host.Unmap()}, n.now())
	})
	switch {
	case errors.Is(err, enrollment.ErrFull):
		return frameserver.Refuse(wire.Refuse(wire.CodeEnrollmentFull, "the enrollment list is full; nothing was recorded"))
	case errors.Is(err, enrollment.ErrHostFull):
		return frameserver.Refuse(wire.Refuse(wire.CodeEnrollmentHostFull, "this host has %d undecided enrollments already", enrollment.MaxUndecidedHost))
	}
	if ans.Admit && !n.admitEnrolled(ctx, ans.Row) {
		return n.enrollAnswer(ask, verbs.EnrollPending, ans.Challenge[:])
	}
	return n.answerRow(ask, ans)
}

// answerRow answers a row's decision; an approval is answered once the fleet records it.
func (n *Node) answerRow(ask verbs.EnrollRequest, ans enrollment.Answer) frameserver.Reply {
	switch ans.Decision {
	case verbs.RowRejected:
		return n.enrollAnswer(ask, verbs.EnrollRejected, nil)
	case verbs.RowApproved:
		if m, ok := n.cons.State().Member(ask.NodeID); ok && bytes.Equal(m.Key, ask.Key) {
			return n.enrollAnswer(ask, verbs.EnrollApproved, nil)
		}
	}
	return n.enrollAnswer(ask, verbs.EnrollPending, ans.Challenge[:])
}

// enrollAnswer signs an answer to ask: over its nonce and node id, so it answers this poll of
// this machine only. An approval carries the fleet's roster.
func (n *Node) enrollAnswer(ask verbs.EnrollRequest, outcome uint8, challenge []byte) frameserver.Reply {
	a := verbs.EnrollAnswer{Outcome: outcome, Challenge: challenge}
	if outcome == verbs.EnrollApproved {
		a.Roster = verbs.AppendRoster(nil, rosterOf(n.cons.State()))
		n.enroll.c.rostersServed.Add(1)
		fp := sha256.Sum256(a.Roster)
		n.withWindow(func(w *enrollment.Window) { w.SetRosterFingerprint(ask.NodeID, fp[:]) })
	}
	a.Key = n.id.Key.Public()
	a.Signature = n.id.Key.Sign(wire.LabelEnrollAdmission, ask.Nonce[:], []byte(ask.NodeID), a.AppendSigned(nil))
	return frameserver.Ok(a.Append(nil))
}

// rosterOf is the fleet's membership as an approved enrollment answers it.
func rosterOf(st *fleet.State) verbs.Roster {
	r := verbs.Roster{ClusterID: st.ClusterID()}
	for _, m := range st.Members() {
		r.Members = append(r.Members, verbs.RosterMember{ID: m.ID, Seat: uint8(m.Seat), RaftEndpoint: m.RaftEndpoint,
			NodeEndpoint: m.NodeEndpoint, Key: m.Key})
	}
	return r
}

// admitEnrolled records an approved row in the fleet as a learner; on failure the row waits
// again and the reason is logged.
func (n *Node) admitEnrolled(ctx context.Context, row enrollment.Row) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := n.cons.Propose(ctx, fleet.Admit{ID: row.ID, Seat: fleet.Learner, RaftEndpoint: row.RaftEndpoint, Key: row.Key})
	if err == nil || errors.Is(err, fleet.ErrNotNeeded) {
		n.log.Info("enrolled a machine as a learner", "node", row.ID, "endpoint", row.NodeEndpoint, "host", row.Host)
		return true
	}
	n.log.Warn("could not record an approved enrollment; it waits again", "node", row.ID, "err", err)
	n.withWindow(func(w *enrollment.Window) { w.Revert(row.ID) })
	return false
}

func (n *Node) enrollMalformed(err error) frameserver.Reply {
	var ve *verbs.Error
	if errors.As(err, &ve) && ve.TooLong && ve.Field == "nodeId" {
		n.enroll.c.refusedIDTooLong.Add(1)
	} else {
		n.enroll.c.refusedMalformed.Add(1)
	}
	ref, _ := verbs.RefusalOf(err)
	return frameserver.Refuse(ref)
}

// operatorGate refuses a cluster-deciding request unless the caller has operator standing
// (this machine, or a voter's proven or ticket key), counting the refusal under the family's
// own counters.
func (n *Node) operatorGate(c *frameserver.Conn, notMember, unidentified *atomic.Uint64) (frameserver.Reply, bool) {
	v := n.admit(c)
	switch {
	case !v.Admitted:
		notMember.Add(1)
		return n.notAMember(v), false
	case !v.Identified:
		unidentified.Add(1)
		return frameserver.Refuse(wire.Refuse(wire.CodeIdentifiedCallerRequired, "this verb needs an identified caller; --fleet-open admits anonymous callers to compile verbs only")), false
	case !v.Operator:
		n.counters.operatorStandingRequired.Add(1)
		return frameserver.Refuse(wire.Refuse(wire.CodeOperatorStandingRequired, "this verb is answered to this machine or a voter")), false
	}
	return frameserver.Reply{}, true
}
