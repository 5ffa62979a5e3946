package node

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
	"github.com/buildfleet/buildfleet/internal/pace/enrollment"
)

// enrollCounters are the enrollment and formation counters of pace-node §10.6: the leader's
// window (enrollment.Counters) and what the node adds around it, and the joining side's.
type enrollCounters struct {
	window                                  enrollment.Counters
	refusedMalformed, refusedRevoked        atomic.Uint64
	refusedForged, refusedIDTooLong         atomic.Uint64
	rostersServed                           atomic.Uint64
	controlNotAMember, controlUnidentified  atomic.Uint64
	yields, joinsAbandoned                  atomic.Uint64
	admissionsRefused, admissionsUnverified atomic.Uint64
	admissionsRefusedPin                    atomic.Uint64
}

func (c *enrollCounters) metrics() []counter.Metric {
	w := &c.window
	m := func(name, help string, v *atomic.Uint64) counter.Metric {
		return counter.Metric{Name: name, Help: help, Value: v}
	}
	return []counter.Metric{
		m("pace_enrollment_requests_refused_full_total", "ENROLL refused: the leader's list holds 64 rows.", &w.RefusedFull),
		m("pace_enrollment_requests_refused_host_cap_total", "ENROLL refused: the source host has 4 undecided rows.", &w.RefusedHostCap),
		m("pace_enrollment_requests_refused_malformed_total", "ENROLL refused as malformed.", &c.refusedMalformed),
		m("pace_enrollment_requests_refused_revoked_key_total", "ENROLL refused at the door: a key the cluster revoked.", &c.refusedRevoked),
		m("pace_enrollment_requests_refused_forged_total", "ENROLL refused: the signature does not verify under the key it names.", &c.refusedForged),
		m("pace_enrollment_requests_refused_id_too_long_total", "ENROLL refused: a node id over 64 bytes.", &c.refusedIDTooLong),
		m("pace_enrollment_requests_cleared_total", "Rows dropped by --enroll-clear.", &w.Cleared),
		m("pace_enrollment_requests_expired_total", "Undecided rows dropped after 10 minutes unpolled.", &w.Expired),
		m("pace_enrollment_rosters_served_total", "Approved answers sent (each carries the roster).", &c.rostersServed),
		m("pace_enrollment_approvals_manual_total", "Rows approved by --enroll-approve.", &w.ApprovalsManual),
		m("pace_enrollment_approvals_auto_total", "Rows approved by the automatic window.", &w.ApprovalsAuto),
		m("pace_enrollment_approvals_refused_key_mismatch_total", "--enroll-approve naming a key other than the row's.", &w.KeyMismatch),
		m("pace_enrollment_control_refused_not_a_member_total", "ENROLL-CONTROL from a caller with no admission route.", &c.controlNotAMember),
		m("pace_enrollment_control_refused_identified_caller_required_total", "ENROLL-CONTROL from an anonymous (--fleet-open) caller.", &c.controlUnidentified),
		m("pace_formation_yields_total", "Times this node yielded to a fleet and asked to join it.", &c.yields),
		m("pace_formation_joins_abandoned_total", "Requests to join abandoned: no signed answer for 10 minutes.", &c.joinsAbandoned),
		m("pace_formation_admissions_refused_total", "Approvals refused: the roster does not record this node under its key.", &c.admissionsRefused),
		m("pace_formation_admissions_unverified_total", "Answers ignored: unsigned, or signed by a key that did not prove the fleet asked.", &c.admissionsUnverified),
		m("pace_formation_admissions_refused_pin_total", "Approvals refused: the roster is not the cluster --fleet-id pins.", &c.admissionsRefusedPin),
	}
}
