package session_test

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// gradient-protocol §4.4 Bookkeeping: the last failure of every worker ID is its offline
// reason; a failure before the token check is kept only for a registered ID.
func TestOfflineReason(t *testing.T) {
	tests := []struct {
		name       string
		end        session.End
		wantKeep   bool
		wantReason string
	}{
		{"gradient-protocol §4.4 bookkeeping: before the token check, unknown ID → dropped (unknown IDs cannot fill the map)",
			session.End{Kind: session.EndRejectSent, Code: 403, Reason: "unknown worker", WorkerID: workerID, BeforeTokenCheck: true}, false, ""},
		{"gradient-protocol §4.4 bookkeeping: before the token check, registered ID → kept",
			session.End{Kind: session.EndRejectSent, Code: 403, Reason: "worker is deactivated", WorkerID: workerID, BeforeTokenCheck: true, Registered: true},
			true, "403 worker is deactivated"},
		{"gradient-protocol §4.4 bookkeeping: at the token check → kept",
			session.End{Kind: session.EndRejectSent, Code: 401, Reason: "no valid peer tokens provided", WorkerID: workerID, Registered: true},
			true, "401 no valid peer tokens provided"},
		{"gradient-protocol §4.1 as_dialer: the dialed worker's Reject → kept as offline reason",
			session.End{Kind: session.EndRejectReceived, Code: 401, Reason: "unknown worker id or wrong token", WorkerID: workerID, Registered: true},
			true, "rejected by peer: 401 unknown worker id or wrong token"},
		{"gradient-protocol §4.4 bookkeeping: no worker ID (wrong first message) → dropped",
			session.End{Kind: session.EndRejectSent, Code: 400, Reason: "expected InitConnection", BeforeTokenCheck: true}, false, ""},
		{"gradient-protocol §4.3: a redial is not a failure",
			session.End{Kind: session.EndRedial, WorkerID: workerID, Registered: true}, false, ""},
		{"a driver fault is not the worker's failure",
			session.End{Kind: session.EndFault, WorkerID: workerID, Registered: true, Err: session.ErrOutOfTurn}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, reason, keep := session.OfflineReason(tc.end)
			if keep != tc.wantKeep || reason != tc.wantReason || (keep && id != workerID) {
				t.Fatalf("OfflineReason = (%q, %q, %v), want (%q, %q, %v)", id, reason, keep, workerID, tc.wantReason, tc.wantKeep)
			}
		})
	}
}

// The bookkeeping fields come out of the authority as the rule needs them: an unknown ID
// refused before the challenge is not kept, a registered one refused at the token check is.
func TestAuthorityEndsFeedBookkeeping(t *testing.T) {
	a, _ := session.NewAuthority(inbound)
	a, _ = a.Step(recv(initConn(otherID)))
	_, out := a.Step(facts(session.WorkerFacts{}))
	if _, _, keep := session.OfflineReason(out.End); keep {
		t.Fatalf("unknown worker's failure kept: %+v", out.End)
	}

	a, _ = session.NewAuthority(inbound)
	for _, ev := range []session.Event{recv(initConn(workerID)), facts(twoProjs), recv(&wire.AuthResponse{Tokens: []wire.PeerToken{tok("proj-a", "x")}})} {
		a, _ = a.Step(ev)
	}
	_, out = a.Step(valid())
	id, reason, keep := session.OfflineReason(out.End)
	if !keep || id != workerID || reason != "401 no valid peer tokens provided" {
		t.Fatalf("OfflineReason = (%q, %q, %v) for %+v", id, reason, keep, out.End)
	}
}

func TestKeepFailure(t *testing.T) {
	for _, tc := range []struct {
		id               string
		before, reg, out bool
	}{
		{workerID, false, false, true},
		{workerID, true, false, false},
		{workerID, true, true, true},
		{"", false, true, false},
	} {
		if got := session.KeepFailure(tc.id, tc.before, tc.reg); got != tc.out {
			t.Errorf("KeepFailure(%q, before=%v, registered=%v) = %v", tc.id, tc.before, tc.reg, got)
		}
	}
}
