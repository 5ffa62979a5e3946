package scheduler

import (
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// TestReleaseMatchesTokenAndKey: "RELEASE frees the key and decrements
// the worker's in-flight. Token+key must both match, else unknown-lease"
// (pace-node §6.4).
func TestReleaseMatchesTokenAndKey(t *testing.T) {
	f := newFixture(t)
	f.register("a", "10.0.0.1", fp, 4)
	g := f.mustLease(fp, "k")
	other := f.mustLease(fp, "k2")
	for _, bad := range []verbs.ReleaseRequest{
		{Token: g.Token, Key: "k2"},
		{Token: other.Token, Key: "k"},
		{Token: "forged", Key: "k"},
	} {
		refusedWith(t, f.s.Release(bad), wire.CodeUnknownLease)
	}
	f.mustRelease(g, "k")
	if n := f.inFlight("a"); n != 1 {
		t.Fatalf("in-flight %d after one of two released", n)
	}
	refusedWith(t, f.s.Release(verbs.ReleaseRequest{Token: g.Token, Key: "k"}), wire.CodeUnknownLease)
	if got := f.counter("pace_dispatch_leases_released_total"); got != 1 {
		t.Fatalf("released = %d, want 1", got)
	}
	f.mustLease(fp, "k") // the key is free again
}

// TestReleaseAfterRestart: serials restart at 1, so a token from the
// previous scheduler must not release this one's lease on another key.
func TestReleaseAfterRestart(t *testing.T) {
	before := newFixture(t)
	before.register("a", "10.0.0.1", fp, 4)
	old := before.mustLease(fp, "k-old")

	f := newFixture(t)
	f.register("a", "10.0.0.1", fp, 4)
	f.mustLease(fp, "k-new")
	if f.signer.last().Serial != 1 {
		t.Fatal("a new scheduler's serials start at 1")
	}
	refusedWith(t, f.s.Release(verbs.ReleaseRequest{Token: old.Token, Key: "k-new"}), wire.CodeUnknownLease)
	refusedWith(t, f.s.Release(verbs.ReleaseRequest{Token: old.Token, Key: "k-old"}), wire.CodeUnknownLease)
	if f.s.Outstanding() != 1 {
		t.Fatal("a stale token released a live lease")
	}
}

// TestReleaseLate: "a release after expiry counts released_late"
// (pace-node §6.4), whether or not the sweep has run, and only once.
func TestReleaseLate(t *testing.T) {
	for _, swept := range []bool{false, true} {
		f := newFixture(t)
		f.s.cfg.HeartbeatTimeout = time.Hour
		id := f.register("a", "10.0.0.1", fp, 4)
		g := f.mustLease(fp, "k")
		f.clock.Advance(10*time.Minute + time.Millisecond)
		f.heartbeat("a", "10.0.0.1", id, 0, verbs.Load{})
		if swept {
			f.s.Sweep()
		}
		f.mustRelease(g, "k")
		refusedWith(t, f.s.Release(verbs.ReleaseRequest{Token: g.Token, Key: "k"}), wire.CodeUnknownLease)
		if f.counter("pace_dispatch_leases_released_late_total") != 1 || f.counter("pace_dispatch_leases_released_total") != 0 {
			t.Fatalf("swept=%v: late %d, released %d", swept, f.counter("pace_dispatch_leases_released_late_total"),
				f.counter("pace_dispatch_leases_released_total"))
		}
	}
}

func TestRetiredLeasesAreBounded(t *testing.T) {
	f := newFixture(t)
	f.s.retired = newRetiredLeases(2)
	f.s.cfg.HeartbeatTimeout = time.Hour
	f.register("a", "10.0.0.1", fp, 4)
	var grants []verbs.LeaseGrant
	for _, k := range []string{"k0", "k1", "k2"} {
		grants = append(grants, f.mustLease(fp, k))
	}
	f.clock.Advance(11 * time.Minute)
	f.s.Sweep()
	refusedWith(t, f.s.Release(verbs.ReleaseRequest{Token: grants[0].Token, Key: "k0"}), wire.CodeUnknownLease)
	f.mustRelease(grants[2], "k2")
}

type verifierFunc func(string) bool

func (v verifierFunc) SignedByCluster(token string) bool { return v(token) }

func TestReleaseUnauthorized(t *testing.T) {
	f := newFixture(t)
	f.s.cfg.Verifier = verifierFunc(func(token string) bool { return token != "forged" })
	refusedWith(t, f.s.Release(verbs.ReleaseRequest{Token: "forged", Key: "k"}), wire.CodeUnknownLease)
	refusedWith(t, f.s.Release(verbs.ReleaseRequest{Token: "ours-but-gone", Key: "k"}), wire.CodeUnknownLease)
	if got := f.counter("pace_dispatch_leases_unauthorized_total"); got != 1 {
		t.Fatalf("unauthorized = %d, want 1", got)
	}
}

// TestLeaseExpiryFreesTheKey: expiry is the safety net for a dead client;
// the key stays in flight for the whole lifetime, then is free.
func TestLeaseExpiryFreesTheKey(t *testing.T) {
	f := newFixture(t)
	f.s.cfg.HeartbeatTimeout = time.Hour
	id := f.register("a", "10.0.0.1", fp, 4)
	f.mustLease(fp, "k")
	f.clock.Advance(10 * time.Minute)
	f.heartbeat("a", "10.0.0.1", id, 0, verbs.Load{})
	_, err := f.lease(fp, "k")
	refusedWith(t, err, wire.CodeAlreadyInFlight)
	f.clock.Advance(time.Millisecond)
	f.s.Sweep()
	if f.s.Outstanding() != 0 {
		t.Fatal("an expired lease outlived the sweep")
	}
	f.mustLease(fp, "k")
}

// TestInFlightAccounting covers the package doc's rule: a release lowers
// whichever figure covered the grant; an expiry lowers only a pending one.
func TestInFlightAccounting(t *testing.T) {
	f := newFixture(t)
	f.s.cfg.HeartbeatTimeout = time.Hour
	id := f.register("a", "10.0.0.1", fp, 8)
	covered := f.mustLease(fp, "covered")
	f.heartbeat("a", "10.0.0.1", id, 1, verbs.Load{}) // reports the covered job
	pending := f.mustLease(fp, "pending")
	if n := f.inFlight("a"); n != 2 {
		t.Fatalf("in-flight %d, want 1 reported + 1 pending", n)
	}
	f.mustRelease(covered, "covered")
	f.mustRelease(pending, "pending")
	if n := f.inFlight("a"); n != 0 {
		t.Fatalf("in-flight %d after both released", n)
	}
	f.mustLease(fp, "expires")
	f.clock.Advance(11 * time.Minute)
	f.s.Sweep()
	if n := f.inFlight("a"); n != 0 {
		t.Fatalf("in-flight %d after a pending grant expired", n)
	}
}
