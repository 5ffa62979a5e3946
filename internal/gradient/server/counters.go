package server

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/gradient/counter"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
)

// Counters are the worker side's counters, each exported under its Prometheus name by
// Metrics.
type Counters struct {
	SessionsStarted        atomic.Uint64
	HandshakesFailed       atomic.Uint64 // broke off without a Reject (socket, timeout, agreement)
	HandshakesMalformed    atomic.Uint64 // of those, a message that did not decode (answered Error 400)
	ProtocolViolations     atomic.Uint64 // running sessions ended with Error 400 for a message they never carry
	ConnectionsRefusedFull atomic.Uint64
	Refused400             atomic.Uint64
	Refused401             atomic.Uint64
	Refused403             atomic.Uint64
	Refused495             atomic.Uint64
	Refused496             atomic.Uint64
	JobsAssigned           atomic.Uint64
	JobsCompleted          atomic.Uint64
	JobsFailed             atomic.Uint64
	JobsDeclined           atomic.Uint64
	JobsAborted            atomic.Uint64
	ClaimsLost             atomic.Uint64
	ReportsStale           atomic.Uint64
	ReportsFailed          atomic.Uint64
	ReportsInvalid         atomic.Uint64
	FramesMalformed        atomic.Uint64
	MessagesIgnored        atomic.Uint64
	LogBytesDropped        atomic.Uint64
	WorkersSilent          atomic.Uint64
	SetupFailures          atomic.Uint64 // jobs workers gave back for their own set-up (Canceled, not draining)
	WorkersQuarantined     atomic.Uint64
	Reauths                atomic.Uint64 // reauth rounds that ended in AuthUpdate (gradient-protocol §4.3)
	ReauthEnded            atomic.Uint64 // running sessions a reauth round ended (403 deactivated)
	CacheSessions          atomic.Uint64 // /cache/{cache}/proto sessions that reached InitAck (gradient-protocol §7.1)
	CacheSessionsRefusedIP atomic.Uint64 // cache upgrades refused 503: the IP has 32 anonymous sessions
	CacheMessagesRefused   atomic.Uint64 // messages a cache session answered Reject 403
}

// refused counts a handshake Reject by its code.
func (c *Counters) refused(code uint16) {
	switch code {
	case session.CodeUnexpected:
		c.Refused400.Add(1)
	case session.CodeUnauthorized:
		c.Refused401.Add(1)
	case session.CodeForbidden:
		c.Refused403.Add(1)
	case session.CodeNoCache:
		c.Refused495.Add(1)
	case session.CodeAlreadyConnected:
		c.Refused496.Add(1)
	}
}

// Metrics lists every counter under its exposition name, each with its own help text.
func (c *Counters) Metrics() []counter.Metric {
	return []counter.Metric{
		{Name: "gradient_sessions_started_total", Help: "Worker sessions that completed the handshake.", Value: &c.SessionsStarted},
		{Name: "gradient_handshakes_failed_total", Help: "Handshakes that broke off without a Reject.", Value: &c.HandshakesFailed},
		{Name: "gradient_handshakes_malformed_total", Help: "Handshakes ended by a message that did not decode, answered Error 400 malformed message.", Value: &c.HandshakesMalformed},
		{Name: "gradient_protocol_violations_total", Help: "Running sessions ended with Error 400 for a message a session never carries (InitConnection again, an unknown job kind).", Value: &c.ProtocolViolations},
		{Name: "gradient_connections_refused_full_total", Help: "Connections refused with 503: proto.maxConnections reached.", Value: &c.ConnectionsRefusedFull},
		{Name: "gradient_handshakes_rejected_400_total", Help: "Handshakes rejected 400 (unexpected message).", Value: &c.Refused400},
		{Name: "gradient_handshakes_rejected_401_total", Help: "Handshakes rejected 401 (no valid peer tokens).", Value: &c.Refused401},
		{Name: "gradient_handshakes_rejected_403_total", Help: "Handshakes rejected 403 (unknown, deactivated, no team grant, inbound off).", Value: &c.Refused403},
		{Name: "gradient_handshakes_rejected_495_total", Help: "Handshakes rejected 495 (no project with a cache).", Value: &c.Refused495},
		{Name: "gradient_handshakes_rejected_496_total", Help: "Handshakes rejected 496 (worker already connected).", Value: &c.Refused496},
		{Name: "gradient_jobs_assigned_total", Help: "AssignJob messages sent.", Value: &c.JobsAssigned},
		{Name: "gradient_jobs_completed_total", Help: "JobCompleted reports applied.", Value: &c.JobsCompleted},
		{Name: "gradient_jobs_failed_total", Help: "JobFailed reports applied.", Value: &c.JobsFailed},
		{Name: "gradient_jobs_declined_total", Help: "Assignments the worker declined.", Value: &c.JobsDeclined},
		{Name: "gradient_jobs_aborted_total", Help: "AbortJob messages sent.", Value: &c.JobsAborted},
		{Name: "gradient_claims_lost_total", Help: "Candidates another claimer took first.", Value: &c.ClaimsLost},
		{Name: "gradient_reports_stale_total", Help: "Reports dropped: their assignment was not handed out by the session.", Value: &c.ReportsStale},
		{Name: "gradient_reports_failed_total", Help: "Reports the store could not apply.", Value: &c.ReportsFailed},
		{Name: "gradient_reports_invalid_total", Help: "Reports that failed validation; each failed its job.", Value: &c.ReportsInvalid},
		{Name: "gradient_frames_malformed_total", Help: "Frames that did not decode; each ended its session with Error 400.", Value: &c.FramesMalformed},
		{Name: "gradient_messages_ignored_total", Help: "Messages a worker session does not serve.", Value: &c.MessagesIgnored},
		{Name: "gradient_log_bytes_dropped_total", Help: "Build log bytes past the stored limit.", Value: &c.LogBytesDropped},
		{Name: "gradient_workers_silent_total", Help: "Workers dropped by the liveness pass.", Value: &c.WorkersSilent},
		{Name: "gradient_worker_setup_failures_total", Help: "Jobs a worker gave back because its own set-up failed; re-queued without an attempt.", Value: &c.SetupFailures},
		{Name: "gradient_workers_quarantined_total", Help: "Workers quarantined after set-up failures in a row.", Value: &c.WorkersQuarantined},
		{Name: "gradient_reauths_total", Help: "Reauth rounds that ended in AuthUpdate.", Value: &c.Reauths},
		{Name: "gradient_reauth_sessions_ended_total", Help: "Running sessions a reauth round ended (worker deactivated).", Value: &c.ReauthEnded},
		{Name: "gradient_cache_sessions_started_total", Help: "Read-only cache sessions that completed the handshake.", Value: &c.CacheSessions},
		{Name: "gradient_cache_sessions_refused_per_ip_total", Help: "Cache session upgrades refused 503: 32 anonymous sessions from that IP.", Value: &c.CacheSessionsRefusedIP},
		{Name: "gradient_cache_session_messages_refused_total", Help: "Messages a cache session refused with Reject 403.", Value: &c.CacheMessagesRefused},
	}
}
