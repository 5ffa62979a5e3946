package worker

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
)

// Counters are the "Worker" counters of pace-node §10.6, as
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
	RefusedRejectedSource       atomic.Uint64 // a bundle that does not decode or pass the screen
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

// Metric is one counter as the node registers it.
type Metric = counter.Metric

// Metrics lists every counter with its exact Prometheus name.
func (c *Counters) Metrics() []Metric {
	m := []Metric{
		{Name: "pace_worker_jobs_started_total", Help: "Compiles whose compiler was started.", Value: &c.JobsStarted},
		{Name: "pace_worker_jobs_completed_total", Help: "Compiles whose compiler ended, whatever its exit code or whether the client was still there.", Value: &c.JobsCompleted},
		{Name: "pace_worker_compile_milliseconds_total", Help: "Wall-clock milliseconds spent running compilers.", Value: &c.CompileMilliseconds},
		{Name: "pace_worker_jobs_abandoned_client_gone_total", Help: "Compiles whose client went away before the reply was written.", Value: &c.JobsAbandonedClientGone},
		{Name: "pace_worker_bytes_received_total", Help: "COMPILE payload bytes received.", Value: &c.BytesReceived},
		{Name: "pace_worker_bytes_returned_total", Help: "COMPILE reply payload bytes returned.", Value: &c.BytesReturned},
		{Name: "pace_worker_jobs_refused_unknown_fingerprint_total", Help: "COMPILEs refused fingerprint-mismatch: a toolchain this worker does not serve.", Value: &c.RefusedUnknownFingerprint},
		{Name: "pace_worker_jobs_refused_rejected_argument_total", Help: "COMPILEs refused worker-rejected-argument: an argument not on the allowlist.", Value: &c.RefusedRejectedArgument},
		{Name: "pace_worker_jobs_refused_rejected_source_total", Help: "COMPILEs refused because their directives-only bundle did not decode or holds a directive the worker does not run.", Value: &c.RefusedRejectedSource},
		{Name: "pace_worker_jobs_refused_scratch_unavailable_total", Help: "COMPILEs refused worker-scratch-unavailable.", Value: &c.RefusedScratchUnavailable},
		{Name: "pace_worker_jobs_refused_spawn_failed_total", Help: "COMPILEs refused worker-spawn-failed: the compiler could not be started.", Value: &c.RefusedSpawnFailed},
		{Name: "pace_worker_jobs_refused_compiler_unclassified_total", Help: "COMPILEs refused worker-compiler-unclassified: the toolchain's driver family is unknown.", Value: &c.RefusedCompilerUnclassified},
		{Name: "pace_worker_jobs_refused_survey_in_flight_total", Help: "COMPILEs refused worker-toolchain-survey-in-flight.", Value: &c.RefusedSurveyInFlight},
		{Name: "pace_worker_jobs_refused_no_slot_total", Help: "COMPILEs refused no-capacity: every slot busy.", Value: &c.RefusedNoSlot},
		{Name: "pace_worker_jobs_refused_not_a_member_total", Help: "COMPILEs refused not-a-member by the node's admission.", Value: &c.RefusedNotAMember},
		{Name: "pace_worker_jobs_refused_endpoint_busy_total", Help: "COMPILEs refused endpoint-busy: the in-flight byte budget is full.", Value: &c.RefusedEndpointBusy},
		{Name: "pace_worker_jobs_refused_stopping_total", Help: "COMPILEs refused because the worker is stopping.", Value: &c.RefusedStopping},
		{Name: "pace_worker_jobs_refused_cordoned_total", Help: "COMPILEs refused no-capacity because the worker is cordoned.", Value: &c.RefusedCordoned},
		{Name: "pace_worker_jobs_refused_deadline_exceeded_total", Help: "Compiles killed at the worker's compile deadline and answered request-deadline-exceeded.", Value: &c.RefusedDeadlineExceeded},
		{Name: "pace_worker_cordons_refused_not_local_total", Help: "Cordon requests refused because they came from another machine.", Value: &c.CordonsRefusedNotLocal},
		{Name: "pace_worker_jobs_refused_envelope_malformed_total", Help: "COMPILEs refused malformed-frame: the source envelope did not parse.", Value: &c.EnvelopeMalformed},
		{Name: "pace_worker_jobs_refused_envelope_unsupported_codec_total", Help: "COMPILEs refused unsupported-codec.", Value: &c.EnvelopeUnsupportedCodec},
		{Name: "pace_worker_jobs_refused_envelope_declared_too_large_total", Help: "COMPILEs refused payload-too-large: the envelope declared an expansion past the request ceiling.", Value: &c.EnvelopeDeclaredTooLarge},
		{Name: "pace_worker_jobs_refused_envelope_corrupt_total", Help: "COMPILEs refused malformed-frame: the envelope's bytes did not expand to the declared size.", Value: &c.EnvelopeCorrupt},
	}
	for _, r := range lease.Reasons() {
		if r != lease.ReasonUnknownFingerprint && int(r) < len(c.lease) {
			m = append(m, Metric{Name: r.Counter(), Help: leaseReasonHelp[r], Value: &c.lease[r]})
		}
	}
	return append(m,
		Metric{Name: "pace_worker_scheduler_term_regressions_total", Help: "Heartbeat replies from a scheduler at an older Raft term than one already heard.", Value: &c.SchedulerTermRegressions},
		Metric{Name: "pace_worker_scratch_roots_reclaimed_total", Help: "Scratch roots left by a process that is gone, emptied at start.", Value: &c.ScratchRootsReclaimed},
		Metric{Name: "pace_worker_frames_refused_unsupported_version_total", Help: "Compile-port frames refused unsupported-version.", Value: &c.FramesRefusedUnsupportedVersion},
		Metric{Name: "pace_worker_frames_refused_truncated_total", Help: "Compile-port frames that ended mid-frame.", Value: &c.FramesRefusedTruncated},
		Metric{Name: "pace_worker_frames_refused_unknown_opcode_total", Help: "Compile-port frames refused unknown-opcode.", Value: &c.FramesRefusedUnknownOpcode},
		Metric{Name: "pace_worker_frames_refused_unimplemented_verb_total", Help: "Compile-port frames naming a verb this node does not implement.", Value: &c.FramesRefusedUnimplementedVerb},
		Metric{Name: "pace_worker_frames_refused_not_permitted_total", Help: "Compile-port frames refused dispatch-not-permitted.", Value: &c.FramesRefusedNotPermitted},
		Metric{Name: "pace_worker_frames_refused_malformed_payload_total", Help: "COMPILE frames refused malformed-frame: the fields did not decode.", Value: &c.FramesRefusedMalformedPayload},
		Metric{Name: "pace_worker_frames_refused_payload_too_large_total", Help: "COMPILE frames refused payload-too-large from the frame length.", Value: &c.FramesRefusedPayloadTooLarge},
	)
}

// Gauges are the worker's host gauges of pace-node §10.6, read when scraped.
func (w *Worker) Gauges() []counter.Metric {
	return []counter.Metric{
		counter.GaugeFunc("pace_node_cordoned", "1 while this machine's worker is cordoned.", func() float64 {
			if w.cordoned.Load() {
				return 1
			}
			return 0
		}),
		counter.GaugeFunc("pace_node_slots_configured", "Compile slots this worker registers and enforces.", func() float64 { return float64(w.cfg.Slots) }),
		counter.GaugeFunc("pace_node_slots_busy", "Compile slots in use now.", func() float64 { return float64(w.InFlight()) }),
	}
}
