package lease

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// TestReasonsNameTheirCountersAndCodes pins every counter name
// (pace-node §10.6) and wire code (pace-node §5.4) a lease refusal maps to.
func TestReasonsNameTheirCountersAndCodes(t *testing.T) {
	want := []struct {
		reason  Reason
		code    wire.Code
		suffix  string
		counter string
	}{
		{ReasonUnauthorized, wire.CodeLeaseUnauthorized, "unauthorized", "pace_worker_jobs_refused_lease_unauthorized_total"},
		{ReasonNoRoster, wire.CodeGrantUnverifiable, "no_roster", "pace_worker_jobs_refused_lease_no_roster_total"},
		{ReasonIsolated, wire.CodeGrantUnverifiable, "isolated", "pace_worker_jobs_refused_lease_isolated_total"},
		{ReasonSignerRevoked, wire.CodeLeaseUnauthorized, "signer_revoked", "pace_worker_jobs_refused_lease_signer_revoked_total"},
		{ReasonWrongCluster, wire.CodeLeaseUnauthorized, "wrong_cluster", "pace_worker_jobs_refused_lease_wrong_cluster_total"},
		{ReasonEndpointMismatch, wire.CodeLeaseEndpointMismatch, "endpoint_mismatch", "pace_worker_jobs_refused_lease_endpoint_mismatch_total"},
		{ReasonUnknownFingerprint, wire.CodeFingerprintMismatch, "unknown_fingerprint", "pace_worker_jobs_refused_unknown_fingerprint_total"},
		{ReasonExpired, wire.CodeLeaseExpired, "expired", "pace_worker_jobs_refused_lease_expired_total"},
		{ReasonReplayed, wire.CodeLeaseUnauthorized, "replayed", "pace_worker_jobs_refused_lease_replayed_total"},
		{ReasonSpentSetFull, wire.CodeEndpointBusy, "spent_set_full", "pace_worker_jobs_refused_lease_spent_set_full_total"},
	}
	reasons := Reasons()
	if len(reasons) != len(want) {
		t.Fatalf("Reasons() lists %d reasons, want %d", len(reasons), len(want))
	}
	for i, w := range want {
		r := reasons[i]
		if r != w.reason || r.Code() != w.code || r.CounterSuffix() != w.suffix || r.Counter() != w.counter {
			t.Errorf("reason %d: got (%v, %v, %q, %q), want (%v, %v, %q, %q)", i,
				r, r.Code(), r.CounterSuffix(), r.Counter(), w.reason, w.code, w.suffix, w.counter)
		}
		if !r.Code().Live() {
			t.Errorf("%s maps to non-live code %v", w.suffix, r.Code())
		}
	}
}
