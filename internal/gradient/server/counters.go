package server

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
)

// Counters are the worker side's counters, each exported under its Prometheus name by
// Metrics.
type Counters struct {
	SessionsStarted        atomic.Uint64
	HandshakesFailed       atomic.Uint64 // broke off without a Reject (socket, timeout, agreement)
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

// Metric is one counter with its exposition name and help.
type Metric struct {
	Name, Help string
	Value      *atomic.Uint64
}

// Metrics lists every counter under its exposition name.
func (c *Counters) Metrics() []Metric {
	return []Metric{
		{"gradient_sessions_started_total", "Worker sessions that completed the handshake.", &c.SessionsStarted},
		{"gradient_handshakes_failed_total", "Handshakes that broke off without a Reject.", &c.HandshakesFailed},
		{"gradient_connections_refused_full_total", "Connections refused with 503: proto.maxConnections reached.", &c.ConnectionsRefusedFull},
		{"gradient_handshakes_rejected_400_total", "Handshakes rejected 400 (unexpected message).", &c.Refused400},
		{"gradient_handshakes_rejected_401_total", "Handshakes rejected 401 (no valid peer tokens).", &c.Refused401},
		{"gradient_handshakes_rejected_403_total", "Handshakes rejected 403 (unknown, deactivated, no team grant, inbound off).", &c.Refused403},
		{"gradient_handshakes_rejected_495_total", "Handshakes rejected 495 (no project with a cache).", &c.Refused495},
		{"gradient_handshakes_rejected_496_total", "Handshakes rejected 496 (worker already connected).", &c.Refused496},
		{"gradient_jobs_assigned_total", "AssignJob messages sent.", &c.JobsAssigned},
		{"gradient_jobs_completed_total", "JobCompleted reports applied.", &c.JobsCompleted},
		{"gradient_jobs_failed_total", "JobFailed reports applied.", &c.JobsFailed},
		{"gradient_jobs_declined_total", "Assignments the worker declined.", &c.JobsDeclined},
		{"gradient_jobs_aborted_total", "AbortJob messages sent.", &c.JobsAborted},
		{"gradient_claims_lost_total", "Candidates another claimer took first.", &c.ClaimsLost},
		{"gradient_reports_stale_total", "Reports dropped: their assignment was not handed out by the session.", &c.ReportsStale},
		{"gradient_reports_failed_total", "Reports the store could not apply.", &c.ReportsFailed},
		{"gradient_reports_invalid_total", "Reports that failed validation; each failed its job.", &c.ReportsInvalid},
		{"gradient_frames_malformed_total", "Frames that did not decode; each ended its session with Error 400.", &c.FramesMalformed},
		{"gradient_messages_ignored_total", "Messages a worker session does not serve.", &c.MessagesIgnored},
		{"gradient_log_bytes_dropped_total", "Build log bytes past the stored limit.", &c.LogBytesDropped},
		{"gradient_workers_silent_total", "Workers dropped by the liveness pass.", &c.WorkersSilent},
		{"gradient_worker_setup_failures_total", "Jobs a worker gave back because its own set-up failed; re-queued without an attempt.", &c.SetupFailures},
		{"gradient_workers_quarantined_total", "Workers quarantined after set-up failures in a row.", &c.WorkersQuarantined},
		{"gradient_reauths_total", "Reauth rounds that ended in AuthUpdate.", &c.Reauths},
		{"gradient_reauth_sessions_ended_total", "Running sessions a reauth round ended (worker deactivated).", &c.ReauthEnded},
		{"gradient_cache_sessions_started_total", "Read-only cache sessions that completed the handshake.", &c.CacheSessions},
		{"gradient_cache_sessions_refused_per_ip_total", "Cache session upgrades refused 503: 32 anonymous sessions from that IP.", &c.CacheSessionsRefusedIP},
		{"gradient_cache_session_messages_refused_total", "Messages a cache session refused with Reject 403.", &c.CacheMessagesRefused},
	}
}
