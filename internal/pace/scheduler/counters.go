package scheduler

import "sync/atomic"

// Counters are the "Dispatch/scheduler" counters of spec
// pace-node-and-kv.md §10.6, as plain atomics the node exports under the
// names Metrics gives. The frame and identity refusals at the end are
// counted by the node's listener; they live here so that every counter of
// the family is registered once, from one place.
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

// Metric names one counter for export.
type Metric struct {
	Name  string
	Help  string
	Value *atomic.Uint64
}

// Metrics lists every counter with its exact Prometheus name.
func (c *Counters) Metrics() []Metric {
	return []Metric{
		{"pace_dispatch_leases_granted_total", "Leases granted.", &c.LeasesGranted},
		{"pace_dispatch_leases_released_total", "Leases released by their client before expiry.", &c.LeasesReleased},
		{"pace_dispatch_leases_no_worker_total", "LEASEs refused no-worker: no registered worker has the fingerprint.", &c.LeasesNoWorker},
		{"pace_dispatch_leases_no_capacity_total", "LEASEs refused no-capacity: every match is full of this fleet's work.", &c.LeasesNoCapacity},
		{"pace_dispatch_leases_withdrawn_total", "LEASEs refused withdrawn: matches free on paper but withdrawn.", &c.LeasesWithdrawn},
		{"pace_dispatch_leases_all_excluded_total", "LEASEs refused no-worker because every match was on the client's exclusion list.", &c.LeasesAllExcluded},
		{"pace_dispatch_leases_duplicate_total", "LEASEs refused already-in-flight.", &c.LeasesDuplicate},
		{"pace_dispatch_leases_reclaimed_total", "Leases freed because their worker stopped heartbeating.", &c.LeasesReclaimed},
		{"pace_dispatch_leases_unauthorized_total", "RELEASEs of a token this cluster did not sign.", &c.LeasesUnauthorized},
		{"pace_dispatch_leases_released_late_total", "RELEASEs arriving after their lease expired.", &c.LeasesReleasedLate},
		{"pace_dispatch_leases_malformed_total", "LEASE and RELEASE requests refused as malformed.", &c.LeasesMalformed},
		{"pace_dispatch_leases_field_too_long_total", "LEASE and RELEASE requests refused for a field beyond its bound.", &c.LeasesFieldTooLong},
		{"pace_dispatch_worker_registrations_total", "REGISTERs accepted.", &c.Registrations},
		{"pace_dispatch_worker_registrations_malformed_total", "REGISTER, HEARTBEAT and WITHDRAW requests refused as malformed.", &c.RegistrationsMalformed},
		{"pace_dispatch_worker_registrations_field_too_long_total", "REGISTER, HEARTBEAT and WITHDRAW requests refused for a field beyond its bound.", &c.RegistrationsFieldTooLong},
		{"pace_dispatch_worker_endpoint_mismatch_total", "Registrations whose endpoint host differs from their source address.", &c.EndpointMismatch},
		{"pace_dispatch_workers_expired_total", "Registrations dropped after the heartbeat timeout.", &c.WorkersExpired},
		{"pace_dispatch_workers_withdrawn_total", "Registrations withdrawn by their worker.", &c.WorkersWithdrawn},
		{"pace_dispatch_node_announcements_field_too_long_total", "NODE-ANNOUNCEs refused for a field beyond its bound.", &c.AnnouncementsFieldTooLong},
		{"pace_dispatch_frames_refused_unsupported_version_total", "Scheduler frames refused unsupported-version.", &c.FramesRefusedUnsupportedVersion},
		{"pace_dispatch_frames_refused_unknown_opcode_total", "Scheduler frames refused unknown-opcode.", &c.FramesRefusedUnknownOpcode},
		{"pace_dispatch_frames_refused_not_permitted_total", "Scheduler frames refused dispatch-not-permitted.", &c.FramesRefusedNotPermitted},
		{"pace_dispatch_frames_refused_truncated_total", "Scheduler frames that ended mid-frame.", &c.FramesRefusedTruncated},
		{"pace_scheduler_requests_refused_node_identity_required_total", "Joining verbs refused node-identity-required.", &c.RefusedNodeIdentityRequired},
		{"pace_scheduler_requests_refused_identified_caller_required_total", "Control verbs refused identified-caller-required.", &c.RefusedIdentifiedCallerRequired},
	}
}
