package worker

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/lease"
)

// Counters are the "Worker" counters of spec pace-node-and-kv.md §10.6, as
// plain atomics the node exports under the names Metrics gives. Refusals
// the node decides before it calls the worker (admission, frame-level
// refusals on the compile verbs, cordon requests from off the machine,
// scheduler term regressions seen by its heartbeat) are counted by the
// node in the fields below, so that every counter of the family is
// registered once, from one place.
type Counters struct {
	JobsStarted             atomic.Uint64
	JobsCompleted           atomic.Uint64
	CompileMilliseconds     atomic.Uint64
	JobsAbandonedClientGone atomic.Uint64
	BytesReceived           atomic.Uint64
	BytesReturned           atomic.Uint64

	RefusedUnknownFingerprint   atomic.Uint64
	RefusedRejectedArgument     atomic.Uint64
	RefusedScratchUnavailable   atomic.Uint64
	RefusedSpawnFailed          atomic.Uint64
	RefusedCompilerUnclassified atomic.Uint64
	RefusedSurveyInFlight       atomic.Uint64
	RefusedNoSlot               atomic.Uint64
	RefusedNotAMember           atomic.Uint64 // the node's admission
	RefusedEndpointBusy         atomic.Uint64
	RefusedStopping             atomic.Uint64
	RefusedCordoned             atomic.Uint64
	RefusedDeadlineExceeded     atomic.Uint64
	CordonsRefusedNotLocal      atomic.Uint64 // the node's cordon verb

	EnvelopeMalformed        atomic.Uint64
	EnvelopeUnsupportedCodec atomic.Uint64
	EnvelopeDeclaredTooLarge atomic.Uint64
	EnvelopeCorrupt          atomic.Uint64

	// lease counts lease refusals by reason; the unknown-fingerprint
	// reason counts in RefusedUnknownFingerprint instead.
	lease [len(leaseReasonHelp)]atomic.Uint64

	SchedulerTermRegressions atomic.Uint64 // the node's heartbeat
	ScratchRootsReclaimed    atomic.Uint64

	FramesRefusedUnsupportedVersion atomic.Uint64 // the node's listener
	FramesRefusedTruncated          atomic.Uint64 // the node's listener
	FramesRefusedUnknownOpcode      atomic.Uint64 // the node's listener
	FramesRefusedUnimplementedVerb  atomic.Uint64 // the node's listener
	FramesRefusedNotPermitted       atomic.Uint64 // the node's listener
	FramesRefusedMalformedPayload   atomic.Uint64
	FramesRefusedPayloadTooLarge    atomic.Uint64
}

// leaseReasonHelp describes each lease refusal for its counter's help,
// indexed by lease.Reason.
var leaseReasonHelp = [...]string{
	lease.ReasonUnauthorized:       "COMPILEs refused lease-unauthorized: the token is junk or not signed by a live voter.",
	lease.ReasonNoRoster:           "COMPILEs refused grant-unverifiable: the applied fleet state names no voter yet.",
	lease.ReasonIsolated:           "COMPILEs refused grant-unverifiable: no leader heard for 65 minutes.",
	lease.ReasonSignerRevoked:      "COMPILEs refused lease-unauthorized: signed by a key the cluster revoked.",
	lease.ReasonWrongCluster:       "COMPILEs refused lease-unauthorized: the lease was issued in another cluster.",
	lease.ReasonEndpointMismatch:   "COMPILEs refused lease-endpoint-mismatch: the lease names another worker endpoint.",
	lease.ReasonUnknownFingerprint: "",
	lease.ReasonExpired:            "COMPILEs refused lease-expired: past expiry plus five minutes of slack, or implausibly far ahead.",
	lease.ReasonReplayed:           "COMPILEs refused lease-unauthorized: the lease was already spent at this worker.",
	lease.ReasonSpentSetFull:       "COMPILEs refused endpoint-busy: the spent-lease set is full of unexpired grants.",
}

// countLease counts a lease refusal under its own counter.
func (c *Counters) countLease(r lease.Reason) {
	if r == lease.ReasonUnknownFingerprint {
		c.RefusedUnknownFingerprint.Add(1)
		return
	}
	if int(r) < len(c.lease) {
		c.lease[r].Add(1)
	}
}

// Lease is the counter of one lease refusal reason (tests and the node's
// status page read it).
func (c *Counters) Lease(r lease.Reason) uint64 {
	if r == lease.ReasonUnknownFingerprint {
		return c.RefusedUnknownFingerprint.Load()
	}
	if int(r) >= len(c.lease) {
		return 0
	}
	return c.lease[r].Load()
}

// Metric names one counter for export.
type Metric struct {
	Name  string
	Help  string
	Value *atomic.Uint64
}

// Metrics lists every counter with its exact Prometheus name.
func (c *Counters) Metrics() []Metric {
	m := []Metric{
		{"pace_worker_jobs_started_total", "Compiles whose compiler was started.", &c.JobsStarted},
		{"pace_worker_jobs_completed_total", "Compiles whose compiler ended, whatever its exit code or whether the client was still there.", &c.JobsCompleted},
		{"pace_worker_compile_milliseconds_total", "Wall-clock milliseconds spent running compilers.", &c.CompileMilliseconds},
		{"pace_worker_jobs_abandoned_client_gone_total", "Compiles whose client went away before the reply was written.", &c.JobsAbandonedClientGone},
		{"pace_worker_bytes_received_total", "COMPILE payload bytes received.", &c.BytesReceived},
		{"pace_worker_bytes_returned_total", "COMPILE reply payload bytes returned.", &c.BytesReturned},
		{"pace_worker_jobs_refused_unknown_fingerprint_total", "COMPILEs refused fingerprint-mismatch: a toolchain this worker does not serve.", &c.RefusedUnknownFingerprint},
		{"pace_worker_jobs_refused_rejected_argument_total", "COMPILEs refused worker-rejected-argument: an argument not on the allowlist.", &c.RefusedRejectedArgument},
		{"pace_worker_jobs_refused_scratch_unavailable_total", "COMPILEs refused worker-scratch-unavailable.", &c.RefusedScratchUnavailable},
		{"pace_worker_jobs_refused_spawn_failed_total", "COMPILEs refused worker-spawn-failed: the compiler could not be started.", &c.RefusedSpawnFailed},
		{"pace_worker_jobs_refused_compiler_unclassified_total", "COMPILEs refused worker-compiler-unclassified: the toolchain's driver family is unknown.", &c.RefusedCompilerUnclassified},
		{"pace_worker_jobs_refused_survey_in_flight_total", "COMPILEs refused worker-toolchain-survey-in-flight.", &c.RefusedSurveyInFlight},
		{"pace_worker_jobs_refused_no_slot_total", "COMPILEs refused no-capacity: every slot busy.", &c.RefusedNoSlot},
		{"pace_worker_jobs_refused_not_a_member_total", "COMPILEs refused not-a-member by the node's admission.", &c.RefusedNotAMember},
		{"pace_worker_jobs_refused_endpoint_busy_total", "COMPILEs refused endpoint-busy: the in-flight byte budget is full.", &c.RefusedEndpointBusy},
		{"pace_worker_jobs_refused_stopping_total", "COMPILEs refused because the worker is stopping.", &c.RefusedStopping},
		{"pace_worker_jobs_refused_cordoned_total", "COMPILEs refused no-capacity because the worker is cordoned.", &c.RefusedCordoned},
		{"pace_worker_jobs_refused_deadline_exceeded_total", "Compiles killed at the worker's compile deadline and answered request-deadline-exceeded.", &c.RefusedDeadlineExceeded},
		{"pace_worker_cordons_refused_not_local_total", "Cordon requests refused because they came from another machine.", &c.CordonsRefusedNotLocal},
		{"pace_worker_jobs_refused_envelope_malformed_total", "COMPILEs refused malformed-frame: the source envelope did not parse.", &c.EnvelopeMalformed},
		{"pace_worker_jobs_refused_envelope_unsupported_codec_total", "COMPILEs refused unsupported-codec.", &c.EnvelopeUnsupportedCodec},
		{"pace_worker_jobs_refused_envelope_declared_too_large_total", "COMPILEs refused payload-too-large: the envelope declared an expansion past the request ceiling.", &c.EnvelopeDeclaredTooLarge},
		{"pace_worker_jobs_refused_envelope_corrupt_total", "COMPILEs refused malformed-frame: the envelope's bytes did not expand to the declared size.", &c.EnvelopeCorrupt},
	}
	for _, r := range lease.Reasons() {
		if r != lease.ReasonUnknownFingerprint && int(r) < len(c.lease) {
			m = append(m, Metric{r.Counter(), leaseReasonHelp[r], &c.lease[r]})
		}
	}
	return append(m,
		Metric{"pace_worker_scheduler_term_regressions_total", "Heartbeat replies from a scheduler at an older Raft term than one already heard.", &c.SchedulerTermRegressions},
		Metric{"pace_worker_scratch_roots_reclaimed_total", "Scratch roots left by a process that is gone, emptied at start.", &c.ScratchRootsReclaimed},
		Metric{"pace_worker_frames_refused_unsupported_version_total", "Compile-port frames refused unsupported-version.", &c.FramesRefusedUnsupportedVersion},
		Metric{"pace_worker_frames_refused_truncated_total", "Compile-port frames that ended mid-frame.", &c.FramesRefusedTruncated},
		Metric{"pace_worker_frames_refused_unknown_opcode_total", "Compile-port frames refused unknown-opcode.", &c.FramesRefusedUnknownOpcode},
		Metric{"pace_worker_frames_refused_unimplemented_verb_total", "Compile-port frames naming a verb this node does not implement.", &c.FramesRefusedUnimplementedVerb},
		Metric{"pace_worker_frames_refused_not_permitted_total", "Compile-port frames refused dispatch-not-permitted.", &c.FramesRefusedNotPermitted},
		Metric{"pace_worker_frames_refused_malformed_payload_total", "COMPILE frames refused malformed-frame: the fields did not decode.", &c.FramesRefusedMalformedPayload},
		Metric{"pace_worker_frames_refused_payload_too_large_total", "COMPILE frames refused payload-too-large from the frame length.", &c.FramesRefusedPayloadTooLarge},
	)
}
