package node

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/enrollment"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// enrollControl answers ENROLL-CONTROL (pace-wire §1.13) to an operator: every verb answers
// the list as it stands after it.
func (n *Node) enrollControl(ctx context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	if reply, ok := n.operatorGate(c, &n.enroll.c.controlNotAMember, &n.enroll.c.controlUnidentified); !ok {
		return reply
	}
	ctl, err := verbs.ParseEnrollControl(req.Fields)
	if err != nil {
		ref, _ := verbs.RefusalOf(err)
		return frameserver.Refuse(ref)
	}
	var toAdmit []enrollment.Row
	switch ctl.Verb {
	case verbs.EnrollApprove:
		row, err := n.approveRow(ctl)
		if err != nil {
			return frameserver.Refuse(wire.Refuse(wire.CodeInvalidClusterChange, "%v", err))
		}
		toAdmit = append(toAdmit, row)
	case verbs.EnrollReject:
		n.withWindow(func(w *enrollment.Window) { err = w.Reject(ctl.ID) })
	case verbs.EnrollClear:
		n.withWindow(func(w *enrollment.Window) { w.Clear() })
	case verbs.EnrollAutoOff:
		n.withWindow(func(w *enrollment.Window) { w.AutoOff() })
	case verbs.EnrollAutoApprove:
		d := time.Duration(ctl.Seconds) * time.Second
		n.withWindow(func(w *enrollment.Window) { toAdmit, err = w.AutoApprove(d, n.now()) })
		n.log.Warn("enrollment window open: every machine asking to join is admitted as a learner", "for", d.String())
	}
	if err != nil {
		return frameserver.Refuse(wire.Refuse(wire.CodeInvalidClusterChange, "%v", err))
	}
	for _, row := range toAdmit {
		if !n.admitEnrolled(ctx, row) {
			return frameserver.Refuse(wire.Refuse(wire.CodeInvalidClusterChange, "approved %s, but the fleet could not record it yet; see the leader's log", row.ID))
		}
	}
	return frameserver.Ok(n.enrollmentList().Append(nil))
}

// approveRow checks an approval against the fleet's record and the row.
func (n *Node) approveRow(ctl verbs.EnrollControl) (enrollment.Row, error) {
	st := n.cons.State()
	if m, ok := st.Member(ctl.ID); ok && !bytes.Equal(m.Key, ctl.Key) {
		return enrollment.Row{}, errors.New(ctl.ID + " is already a member of this fleet under key " + edkey.Text(m.Key))
	}
	var row enrollment.Row
	var err error
	n.withWindow(func(w *enrollment.Window) { row, err = w.Approve(ctl.ID, ctl.Key) })
	return row, err
}

// enrollmentList is the list as ENROLL-CONTROL answers it.
func (n *Node) enrollmentList() verbs.EnrollmentList {
	now := n.now()
	var l verbs.EnrollmentList
	n.withWindow(func(w *enrollment.Window) {
		w.Expire(now)
		l.State = verbs.EnrollStateManual
		if left := w.AutoLeft(now); left > 0 {
			l.State, l.SecondsLeft = verbs.EnrollStateAuto, uint64((left+time.Second-1)/time.Second)
		}
		for _, r := range w.Rows() {
			l.Rows = append(l.Rows, rowOf(r, now))
		}
	})
	return l
}

func rowOf(r enrollment.Row, now time.Time) verbs.EnrollmentRow {
	row := verbs.EnrollmentRow{ID: r.ID, Endpoint: r.NodeEndpoint, PeerHost: addrText(r.Host),
		FirstSeenAgo: uint64(now.Sub(r.FirstSeen) / time.Second), Attempts: r.Attempts, Decision: r.Decision,
		ClaimsChanged: r.ClaimsChanged, Role: verbs.EnrollRoleLearner, Key: r.Key, RosterFP: r.RosterFP,
		FirstPeerHost: addrText(r.FirstHost), RaftEndpoint: r.RaftEndpoint}
	if !r.AutoApprovedAt.IsZero() {
		row.AutoApprovedAgo = verbs.Opt[uint64]{Value: uint64(now.Sub(r.AutoApprovedAt) / time.Second), Present: true}
	}
	return row
}

// addrText is a host address as a row shows it; "" when unknown.
func addrText(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}
