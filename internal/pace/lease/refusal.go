package lease

import (
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Reason is why a worker refused a lease. Each reason has its own counter
// (P3), even where reasons share a wire code. A Reason is also an error, so
// callers can test a Refusal with errors.Is(err, lease.ReasonExpired).
type Reason uint8

// Reasons, in the order the checks run.
const (
	ReasonUnauthorized       Reason = iota + 1 // junk, or not signed by a live voter
	ReasonNoRoster                             // the applied state names no voter yet
	ReasonIsolated                             // no leader heard for 65 minutes
	ReasonSignerRevoked                        // signed by a key the cluster revoked
	ReasonWrongCluster                         // issued in another cluster
	ReasonEndpointMismatch                     // issued for another worker endpoint
	ReasonUnknownFingerprint                   // a toolchain this worker does not serve
	ReasonExpired                              // past expiry plus slack, or implausibly far ahead
	ReasonReplayed                             // already spent at this worker
	ReasonSpentSetFull                         // the spent set is full of unexpired grants
)

type reasonRow struct {
	code   wire.Code
	suffix string
	text   string
}

// Counter name shapes: a lease refusal counts under the lease family; the
// fingerprint refusal shares the worker's unknown_fingerprint counter.
const (
	leaseCounterPrefix = "pace_worker_jobs_refused_lease_"
	jobCounterPrefix   = "pace_worker_jobs_refused_"
	counterSuffix      = "_total"
)

var reasonTable = [...]reasonRow{
	ReasonUnauthorized:       {wire.CodeLeaseUnauthorized, "unauthorized", "lease not issued by a live voter"},
	ReasonNoRoster:           {wire.CodeGrantUnverifiable, "no_roster", "no voter in the applied fleet state"},
	ReasonIsolated:           {wire.CodeGrantUnverifiable, "isolated", "no leader heard for 65 minutes"},
	ReasonSignerRevoked:      {wire.CodeLeaseUnauthorized, "signer_revoked", "lease signed by a revoked key"},
	ReasonWrongCluster:       {wire.CodeLeaseUnauthorized, "wrong_cluster", "lease issued in another cluster"},
	ReasonEndpointMismatch:   {wire.CodeLeaseEndpointMismatch, "endpoint_mismatch", "lease issued for another endpoint"},
	ReasonUnknownFingerprint: {wire.CodeFingerprintMismatch, "unknown_fingerprint", "toolchain not served here"},
	ReasonExpired:            {wire.CodeLeaseExpired, "expired", "lease expired"},
	ReasonReplayed:           {wire.CodeLeaseUnauthorized, "replayed", "lease already spent here"},
	ReasonSpentSetFull:       {wire.CodeEndpointBusy, "spent_set_full", "spent-lease set full"},
}

// Reasons lists every reason, so a worker can register each counter at
// start (counters render 0 from start, P3).
func Reasons() []Reason {
	rs := make([]Reason, 0, len(reasonTable)-1)
	for r := ReasonUnauthorized; int(r) < len(reasonTable); r++ {
		rs = append(rs, r)
	}
	return rs
}

func (r Reason) row() reasonRow {
	if r == 0 || int(r) >= len(reasonTable) {
		return reasonTable[ReasonUnauthorized]
	}
	return reasonTable[r]
}

// Error describes the reason in a few words.
func (r Reason) Error() string { return r.row().text }

// Code is the wire error code the worker answers with.
func (r Reason) Code() wire.Code { return r.row().code }

// counterNames holds every reason's full counter name, built once.
var counterNames = func() (names [len(reasonTable)]string) {
	for r := range names {
		prefix := leaseCounterPrefix
		if Reason(r) == ReasonUnknownFingerprint {
			prefix = jobCounterPrefix
		}
		names[r] = prefix + reasonTable[r].suffix + counterSuffix
	}
	return names
}()

// Counter is the exact name of the counter that counts this reason.
func (r Reason) Counter() string {
	if r == 0 || int(r) >= len(counterNames) {
		return counterNames[ReasonUnauthorized]
	}
	return counterNames[r]
}

// CounterSuffix is the distinguishing part of the counter name, e.g.
// "endpoint_mismatch", "signer_revoked" or "unknown_fingerprint".
func (r Reason) CounterSuffix() string { return r.row().suffix }

// Refusal is a refused lease: its reason, and a sentence for the log and the
// wire that names what was wrong.
type Refusal struct {
	Reason  Reason
	Message string
}

func (r *Refusal) Error() string { return r.Reason.Error() + ": " + r.Message }

// Unwrap exposes the Reason for errors.Is.
func (r *Refusal) Unwrap() error { return r.Reason }

// Code is the wire error code the worker answers with.
func (r *Refusal) Code() wire.Code { return r.Reason.Code() }

// Counter is the exact name of the counter this refusal increments.
func (r *Refusal) Counter() string { return r.Reason.Counter() }

// CounterSuffix is the distinguishing part of the counter name.
func (r *Refusal) CounterSuffix() string { return r.Reason.CounterSuffix() }

// Wire is the Error reply the worker sends.
func (r *Refusal) Wire() wire.Refusal { return wire.Refusal{Code: r.Code(), Message: r.Message} }
