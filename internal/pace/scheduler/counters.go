package scheduler

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
)

// Counters are the "Dispatch/scheduler" counters of pace-node §10.6, as plain
// atomics the node exports under the names Metrics gives. The frame and
// identity refusals at the end are counted by the node's listener; they live
// here so that every counter of the family is registered once, from one place.
type Counters struct {
	LeasesGranted             atomic.Uint64
	LeasesReleased            atomic.Uint64
	LeasesNoWorker            atomic.Uint64
	LeasesNoCapacity          atomic.Uint64
	LeasesWithdrawn           atomic.Uint64
	LeasesAllExcluded         atomic.Uint64
	LeasesDuplicate           atomic.Uint64
	LeasesReclaimed           atomic.Uint64
	LeasesUnauthorized        atomic.Uint64
	LeasesReleasedLate        atomic.Uint64
	LeasesMalformed           atomic.Uint64
	LeasesFieldTooLong        atomic.Uint64
	Registrations             atomic.Uint64
	RegistrationsMalformed    atomic.Uint64
	RegistrationsFieldTooLong atomic.Uint64
	EndpointMismatch          atomic.Uint64
	WorkersExpired            atomic.Uint64
	WorkersWithdrawn          atomic.Uint64
	AnnouncementsFieldTooLong atomic.Uint64

	FramesRefusedUnsupportedVersion atomic.Uint64
	FramesRefusedUnknownOpcode      atomic.Uint64
	FramesRefusedNotPermitted       atomic.Uint64
	FramesRefusedTruncated          atomic.Uint64
	RefusedNodeIdentityRequired     atomic.Uint64
	RefusedIdentifiedCallerRequired atomic.Uint64
}

// Metric is one counter as the node registers it.
type Metric = counter.Metric

// Metrics lists every counter with its exact Prometheus name.
func (c *Counters) Metrics() []Metric {
	return []Metric{
		{Name: "pace_dispatch_leases_granted_total", Help: "Leases granted.", Value: &c.LeasesGranted},
		{Name: "pace_dispatch_leases_released_total", Help: "Leases released by their client before expiry.", Value: &c.LeasesReleased},
		{Name: "pace_dispatch_leases_no_worker_total", Help: "LEASEs refused no-worker: no registered worker has the fingerprint.", Value: &c.LeasesNoWorker},
		{Name: "pace_dispatch_leases_no_capacity_total", Help: "LEASEs refused no-capacity: every match is full of this fleet's work.", Value: &c.LeasesNoCapacity},
		{Name: "pace_dispatch_leases_withdrawn_total", Help: "LEASEs refused withdrawn: matches free on paper but withdrawn.", Value: &c.LeasesWithdrawn},
		{Name: "pace_dispatch_leases_all_excluded_total", Help: "LEASEs refused no-worker because every match was on the client's exclusion list.", Value: &c.LeasesAllExcluded},
		{Name: "pace_dispatch_leases_duplicate_total", Help: "LEASEs refused already-in-flight.", Value: &c.LeasesDuplicate},
		{Name: "pace_dispatch_leases_reclaimed_total", Help: "Leases freed because their worker stopped heartbeating.", Value: &c.LeasesReclaimed},
		{Name: "pace_dispatch_leases_unauthorized_total", Help: "RELEASEs of a token this cluster did not sign.", Value: &c.LeasesUnauthorized},
		{Name: "pace_dispatch_leases_released_late_total", Help: "RELEASEs arriving after their lease expired.", Value: &c.LeasesReleasedLate},
		{Name: "pace_dispatch_leases_malformed_total", Help: "LEASE and RELEASE requests refused as malformed.", Value: &c.LeasesMalformed},
		{Name: "pace_dispatch_leases_field_too_long_total", Help: "LEASE and RELEASE requests refused for a field beyond its bound.", Value: &c.LeasesFieldTooLong},
		{Name: "pace_dispatch_worker_registrations_total", Help: "REGISTERs accepted.", Value: &c.Registrations},
		{Name: "pace_dispatch_worker_registrations_malformed_total", Help: "REGISTER, HEARTBEAT and WITHDRAW requests refused as malformed.", Value: &c.RegistrationsMalformed},
		{Name: "pace_dispatch_worker_registrations_field_too_long_total", Help: "REGISTER, HEARTBEAT and WITHDRAW requests refused for a field beyond its bound.", Value: &c.RegistrationsFieldTooLong},
		{Name: "pace_dispatch_worker_endpoint_mismatch_total", Help: "Registrations whose endpoint host differs from their source address.", Value: &c.EndpointMismatch},
		{Name: "pace_dispatch_workers_expired_total", Help: "Registrations dropped after the heartbeat timeout.", Value: &c.WorkersExpired},
		{Name: "pace_dispatch_workers_withdrawn_total", Help: "Registrations withdrawn by their worker.", Value: &c.WorkersWithdrawn},
		{Name: "pace_dispatch_node_announcements_field_too_long_total", Help: "NODE-ANNOUNCEs refused for a field beyond its bound.", Value: &c.AnnouncementsFieldTooLong},
		{Name: "pace_dispatch_frames_refused_unsupported_version_total", Help: "Scheduler frames refused unsupported-version.", Value: &c.FramesRefusedUnsupportedVersion},
		{Name: "pace_dispatch_frames_refused_unknown_opcode_total", Help: "Scheduler frames refused unknown-opcode.", Value: &c.FramesRefusedUnknownOpcode},
		{Name: "pace_dispatch_frames_refused_not_permitted_total", Help: "Scheduler frames refused dispatch-not-permitted.", Value: &c.FramesRefusedNotPermitted},
		{Name: "pace_dispatch_frames_refused_truncated_total", Help: "Scheduler frames that ended mid-frame.", Value: &c.FramesRefusedTruncated},
		{Name: "pace_scheduler_requests_refused_node_identity_required_total", Help: "Joining verbs refused node-identity-required.", Value: &c.RefusedNodeIdentityRequired},
		{Name: "pace_scheduler_requests_refused_identified_caller_required_total", Help: "Control verbs refused identified-caller-required.", Value: &c.RefusedIdentifiedCallerRequired},
	}
}
