package scheduler

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

const fp = "gcc-13.3.0-x86_64-linux-gnu"

// TestLeaseDecisionOrder walks pace-node §6.2: each refusal answered with its
// code, counted in its own counter and in no other.
func TestLeaseDecisionOrder(t *testing.T) {
	cores8 := verbs.Capacity{LogicalCores: verbs.Some[uint32](8)}
	for _, tc := range []struct {
		name    string
		setup   func(f *fixture)
		req     verbs.LeaseRequest
		code    wire.Code // 0: granted
		message string    // a substring of the refusal's message
		counter string
		also    string // a second counter that must rise, if any
	}{
		{"step 1: a leased key is already-in-flight, checked before capacity",
			func(f *fixture) { f.register("a", "10.0.0.1", fp, 1); f.mustLease(fp, "k") },
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, wire.CodeAlreadyInFlight, "", "pace_dispatch_leases_duplicate_total", ""},
		{"step 2: no worker has the fingerprint",
			func(f *fixture) { f.register("a", "10.0.0.1", "clang-18", 4) },
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, wire.CodeNoWorker, "", "pace_dispatch_leases_no_worker_total", ""},
		{"step 2: fingerprints match byte for byte",
			func(f *fixture) { f.register("a", "10.0.0.1", fp, 4) },
			verbs.LeaseRequest{Fingerprint: strings.ToUpper(fp), Key: "k"}, wire.CodeNoWorker, "", "pace_dispatch_leases_no_worker_total", ""},
		{"step 2: only live entries count",
			func(f *fixture) { f.register("a", "10.0.0.1", fp, 4); f.clock.Advance(91 * time.Second) },
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, wire.CodeNoWorker, "", "pace_dispatch_leases_no_worker_total",
			"pace_dispatch_workers_expired_total"}, // found dead on top, dropped as the sweep would
		{"step 2 refinement: every match excluded is no-worker, counted apart",
			func(f *fixture) { f.register("a", "10.0.0.1", fp, 4); f.register("b", "10.0.0.2", fp, 4) },
			verbs.LeaseRequest{Fingerprint: fp, Key: "k", Exclusions: []string{"10.0.0.2:6674", "10.0.0.1:6674"}},
			wire.CodeNoWorker, "exclusion", "pace_dispatch_leases_all_excluded_total", ""},
		{"step 3: every match full of this fleet's jobs is no-capacity",
			func(f *fixture) { f.register("a", "10.0.0.1", fp, 1); f.mustLease(fp, "other") },
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, wire.CodeNoCapacity, "limited-by: slots", "pace_dispatch_leases_no_capacity_total", ""},
		{"step 3: a full compile budget is no-capacity, limited-by compile-budget",
			func(f *fixture) {
				id := f.register("a", "10.0.0.1", fp, 4)
				f.heartbeat("a", "10.0.0.1", id, 1, verbs.Load{CompileBudgetFull: true})
			},
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, wire.CodeNoCapacity, "limited-by: compile-budget", "pace_dispatch_leases_no_capacity_total", ""},
		{"step 3: cordoned workers are never picked: withdrawn",
			func(f *fixture) {
				id := f.register("a", "10.0.0.1", fp, 4)
				f.heartbeat("a", "10.0.0.1", id, 0, verbs.Load{Cordoned: true})
			},
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, wire.CodeWithdrawn, "limited-by: cordon", "pace_dispatch_leases_withdrawn_total", ""},
		{"step 3: CPU busy with work not the fleet's is withdrawn",
			func(f *fixture) {
				id := f.registerReq(caller("a", "10.0.0.1"), verbs.RegisterRequest{Fingerprint: fp, Endpoint: "10.0.0.1:6674", Slots: 8, Capacity: cores8})
				f.heartbeat("a", "10.0.0.1", id, 0, verbs.Load{CPUBusyPermille: verbs.Some[uint32](1000)})
			},
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, wire.CodeWithdrawn, "limited-by: cpu", "pace_dispatch_leases_withdrawn_total", ""},
		{"step 3: low available memory is withdrawn",
			func(f *fixture) {
				id := f.register("a", "10.0.0.1", fp, 4)
				f.heartbeat("a", "10.0.0.1", id, 0, verbs.Load{AvailableMemory: verbs.Some[uint64](100 << 20)})
			},
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, wire.CodeWithdrawn, "limited-by: memory", "pace_dispatch_leases_withdrawn_total", ""},
		{"step 3: low free scratch is withdrawn",
			func(f *fixture) {
				id := f.register("a", "10.0.0.1", fp, 4)
				f.heartbeat("a", "10.0.0.1", id, 0, verbs.Load{FreeScratch: verbs.Some[uint64](1 << 20)})
			},
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, wire.CodeWithdrawn, "limited-by: scratch", "pace_dispatch_leases_withdrawn_total", ""},
		{"step 3: one withdrawn match among full ones makes the answer withdrawn",
			func(f *fixture) {
				f.register("a", "10.0.0.1", fp, 1)
				f.mustLease(fp, "other")
				id := f.register("b", "10.0.0.2", fp, 4)
				f.heartbeat("b", "10.0.0.2", id, 0, verbs.Load{Cordoned: true})
			},
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, wire.CodeWithdrawn, "", "pace_dispatch_leases_withdrawn_total", ""},
		{"step 3: the fleet's own jobs are subtracted from CPU busy first",
			func(f *fixture) {
				id := f.registerReq(caller("a", "10.0.0.1"), verbs.RegisterRequest{Fingerprint: fp, Endpoint: "10.0.0.1:6674", Slots: 8, Capacity: cores8})
				f.heartbeat("a", "10.0.0.1", id, 4, verbs.Load{CPUBusyPermille: verbs.Some[uint32](500)})
			},
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, 0, "", "pace_dispatch_leases_granted_total", ""},
		{"step 3: a missing load figure is unknown, not saturated",
			func(f *fixture) {
				id := f.register("a", "10.0.0.1", fp, 4)
				f.heartbeat("a", "10.0.0.1", id, 0, verbs.Load{})
			},
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, 0, "", "pace_dispatch_leases_granted_total", ""},
		{"step 4: grant",
			func(f *fixture) { f.register("a", "10.0.0.1", fp, 4) },
			verbs.LeaseRequest{Fingerprint: fp, Key: "k"}, 0, "", "pace_dispatch_leases_granted_total", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.setup(f)
			var decided []Outcome
			f.s.cfg.Decided = func(o Outcome) { decided = append(decided, o) }
			before := counterValues(f)
			_, err := f.s.Lease(tc.req, params)
			if want := outcomeCounted[tc.counter]; !slices.Equal(decided, []Outcome{want}) {
				t.Errorf("Config.Decided heard %v; want [%d]", decided, want)
			}
			if tc.code == 0 && err != nil {
				t.Fatalf("want a grant, got %v", err)
			}
			if tc.code != 0 {
				refusedWith(t, err, tc.code)
				if !strings.Contains(err.Error(), tc.message) {
					t.Fatalf("message %q does not say %q", err, tc.message)
				}
			}
			assertOnlyCounter(t, before, counterValues(f), tc.counter, tc.also)
		})
	}
}

// outcomeCounted is the outcome Config.Decided hears with each decision's counter.
var outcomeCounted = map[string]Outcome{
	"pace_dispatch_leases_granted_total":      Granted,
	"pace_dispatch_leases_duplicate_total":    RefusedAlreadyInFlight,
	"pace_dispatch_leases_no_worker_total":    RefusedNoWorker,
	"pace_dispatch_leases_all_excluded_total": RefusedAllExcluded,
	"pace_dispatch_leases_no_capacity_total":  RefusedNoCapacity,
	"pace_dispatch_leases_withdrawn_total":    RefusedWithdrawn,
}

func counterValues(f *fixture) map[string]uint64 {
	out := map[string]uint64{}
	for _, m := range f.s.Counters().Metrics() {
		out[m.Name] = m.Value.Load()
	}
	return out
}

// assertOnlyCounter: exactly the named counters rose by one; no other
// counter moved.
func assertOnlyCounter(t *testing.T, before, after map[string]uint64, names ...string) {
	t.Helper()
	for k, v := range after {
		want := before[k]
		if slices.Contains(names, k) {
			want++
		}
		if v != want {
			t.Errorf("%s = %d, want %d", k, v, want)
		}
	}
}

// TestGrantBody: the grant carries the worker's endpoint, a token over the
// claims, the worker's codecs, the lifetime, and the worker's key
// (pace-wire §1.13); the lease expires after the lifetime passed in.
func TestGrantBody(t *testing.T) {
	f := newFixture(t)
	f.register("a", "10.0.0.1", fp, 4)
	g := f.mustLease(fp, "k1")
	c := f.signer.last()
	if g.Endpoint != "10.0.0.1:6674" || g.LifetimeMs != 600_000 || g.Token != "tok-1-k1" || len(g.WorkerKey) != verbs.KeyLen {
		t.Fatalf("grant %+v", g)
	}
	if g.WorkerCodecs.Len() != 1 || g.WorkerCodecs.At(0) != wire.CodecZstd {
		t.Fatalf("worker codecs %+v", g.WorkerCodecs)
	}
	want := Claims{Serial: 1, Endpoint: "10.0.0.1:6674", Fingerprint: fp, Key: "k1", ClusterID: "cluster-a", Epoch: 7,
		ExpiresAt: f.clock.Now().Add(10 * time.Minute), WorkerKey: g.WorkerKey}
	if c.Serial != want.Serial || c.Endpoint != want.Endpoint || c.Key != want.Key || c.ClusterID != want.ClusterID ||
		c.Epoch != want.Epoch || !c.ExpiresAt.Equal(want.ExpiresAt) || c.Fingerprint != fp {
		t.Fatalf("claims %+v, want %+v", c, want)
	}
	if f.inFlight("a") != 1 {
		t.Fatalf("in-flight %d after a grant, want 1", f.inFlight("a"))
	}
	f.mustLease(fp, "k2")
	if f.signer.last().Serial != 2 {
		t.Fatalf("serials must count up from 1: %d", f.signer.last().Serial)
	}
}

func TestLeaseLifetimeSetting(t *testing.T) {
	f := newFixture(t)
	f.register("a", "10.0.0.1", fp, 4)
	for _, tc := range []struct {
		set, want time.Duration
	}{{0, DefaultLeaseLifetime}, {30 * time.Second, 30 * time.Second}, {2 * time.Hour, MaxLeaseLifetime}} {
		g, err := f.s.Lease(verbs.LeaseRequest{Fingerprint: fp, Key: tc.set.String()}, Params{LeaseLifetime: tc.set})
		if err != nil || time.Duration(g.LifetimeMs)*time.Millisecond != tc.want {
			t.Errorf("lifetime %v: grant %d ms, %v; want %v", tc.set, g.LifetimeMs, err, tc.want)
		}
	}
}

// TestMostFreeSlotsNotFewestJobs: the pick is the most free slots, not the
// fewest running jobs, which would rank a 64-slot server with a 4-slot laptop
// and send work to the small machines first (pace-node §6.2).
func TestMostFreeSlotsNotFewestJobs(t *testing.T) {
	f := newFixture(t)
	server := f.register("server", "10.0.0.64", fp, 64)
	f.register("laptop", "10.0.0.4", fp, 4)
	f.heartbeat("server", "10.0.0.64", server, 10, verbs.Load{}) // 10 jobs, 54 free
	for i := range 20 {
		g := f.mustLease(fp, "k"+string(rune('a'+i)))
		if g.Endpoint != "10.0.0.64:6674" {
			t.Fatalf("lease %d went to %s; the server has more free slots", i, g.Endpoint)
		}
	}
}

// TestTiesBreakOnUtilization: equal free slots, lower in-flight/slots wins.
func TestTiesBreakOnUtilization(t *testing.T) {
	f := newFixture(t)
	a := f.register("a", "10.0.0.1", fp, 8)
	b := f.register("b", "10.0.0.2", fp, 6)
	f.heartbeat("a", "10.0.0.1", a, 4, verbs.Load{}) // 4 free, 50 %
	f.heartbeat("b", "10.0.0.2", b, 2, verbs.Load{}) // 4 free, 33 %
	if g := f.mustLease(fp, "k"); g.Endpoint != "10.0.0.2:6674" {
		t.Fatalf("picked %s, want the less utilized 10.0.0.2", g.Endpoint)
	}
}

// TestTieBreakIsDeterministic: equal in every figure, the least recently
// picked goes first, then the lower endpoint.
func TestTieBreakIsDeterministic(t *testing.T) {
	f := newFixture(t)
	f.register("b", "10.0.0.2", fp, 100)
	f.register("a", "10.0.0.1", fp, 100)
	want := []string{"10.0.0.1:6674", "10.0.0.2:6674"}
	for i := range 6 {
		g := f.mustLease(fp, "k"+string(rune('a'+i)))
		f.mustRelease(g, "k"+string(rune('a'+i)))
		if g.Endpoint != want[i%2] {
			t.Fatalf("lease %d went to %s, want %s", i, g.Endpoint, want[i%2])
		}
	}
}

func (f *fixture) mustRelease(g verbs.LeaseGrant, key string) {
	f.t.Helper()
	if err := f.s.Release(verbs.ReleaseRequest{Token: g.Token, Key: key}); err != nil {
		f.t.Fatalf("release %s: %v", key, err)
	}
}

func TestExclusionsSkipOnlyTheExcluded(t *testing.T) {
	f := newFixture(t)
	f.register("big", "10.0.0.9", fp, 32)
	f.register("small", "10.0.0.2", fp, 2)
	g, err := f.lease(fp, "k", "10.0.0.9:6674")
	if err != nil || g.Endpoint != "10.0.0.2:6674" {
		t.Fatalf("with the big worker excluded: %+v, %v", g, err)
	}
}

// TestMachineWideInFlight: a machine's registrations share one in-flight
// count, so three toolchains on one machine fill up together instead of
// offering the machine three times over (pace-node §6.1).
func TestMachineWideInFlight(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []string{"gcc", "g++", "clang"} {
		f.register("a", "10.0.0.1", tc, 4)
	}
	for i, tc := range []string{"gcc", "gcc", "clang", "g++"} {
		f.mustLease(tc, "k"+string(rune('0'+i)))
	}
	if n := f.inFlight("a"); n != 4 {
		t.Fatalf("machine in-flight %d, want 4", n)
	}
	for _, tc := range []string{"gcc", "g++", "clang"} {
		_, err := f.lease(tc, "more-"+tc)
		refusedWith(t, err, wire.CodeNoCapacity)
	}
}

func TestSignerFailureRollsBack(t *testing.T) {
	f := newFixture(t)
	f.register("a", "10.0.0.1", fp, 1)
	f.signer.fail = errors.New("no key")
	var decided []Outcome
	f.s.cfg.Decided = func(o Outcome) { decided = append(decided, o) }
	_, err := f.lease(fp, "k")
	if !errors.Is(err, ErrSign) {
		t.Fatalf("got %v, want ErrSign", err)
	}
	if !slices.Equal(decided, []Outcome{RefusedSignFailed}) {
		t.Fatalf("Config.Decided heard %v; want sign-failed alone", decided)
	}
	if r, ok := RefusalOf(err); !ok || r.Code != wire.CodeNoCapacity {
		t.Fatalf("signing failure answered %+v", r)
	}
	f.signer.fail = nil
	if f.inFlight("a") != 0 || f.s.Outstanding() != 0 {
		t.Fatal("a failed grant left a lease or an in-flight count behind")
	}
	f.mustLease(fp, "k") // the key and the slot are free again
	if got := f.counter("pace_dispatch_leases_granted_total"); got != 1 {
		t.Fatalf("granted = %d, want 1", got)
	}
}

// A leader that dissolved its own cluster to join a fleet grants for the fleet: the cluster a
// grant names is the one the request's Params say, not the one the scheduler started with.
func TestGrantsNameTheClusterTheLeaderLeadsNow(t *testing.T) {
	f := newFixture(t)
	fp := "fp-joined"
	f.register("a", "10.0.0.1", fp, 4)
	p := params
	p.ClusterID = "fleet-b"
	if _, err := f.s.Lease(verbs.LeaseRequest{Fingerprint: fp, Key: "k1"}, p); err != nil {
		t.Fatal(err)
	}
	if c := f.signer.last(); c.ClusterID != "fleet-b" {
		t.Fatalf("a grant names cluster %q, want the one the leader leads now", c.ClusterID)
	}
}

// A machine the cluster forgot is granted nothing from the next decision on: its
// registrations go, and so do the leases it held.
func TestAForgottenMachineIsGrantedNothing(t *testing.T) {
	f := newFixture(t)
	fp := "fp-forget"
	f.register("a", "10.0.0.1", fp, 4)
	f.register("b", "10.0.0.2", fp, 1)
	f.mustLease(fp, "k1")
	forgotten := caller("a", "10.0.0.1").Key
	if n := f.s.DropRevoked(func(key []byte) bool { return bytes.Equal(key, forgotten) }); n != 1 {
		t.Fatalf("dropped %d registrations, want a's one", n)
	}
	for i := range 3 {
		g, err := f.lease(fp, fmt.Sprintf("k%d", i+2))
		if err == nil && g.Endpoint == "10.0.0.1:6674" {
			t.Fatal("a forgotten machine was granted a lease")
		}
	}
	if f.inFlight("a") != 0 {
		t.Error("the forgotten machine still holds leases")
	}
}
