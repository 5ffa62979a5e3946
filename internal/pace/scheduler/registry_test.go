package scheduler

import (
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// TestHeartbeatExpiryReclaimsLeases: "An entry with no heartbeat for 90 s
// is dropped (workers_expired) and its leases reclaimed" (pace-node §6.1).
func TestHeartbeatExpiryReclaimsLeases(t *testing.T) {
	f := newFixture(t)
	a := f.register("a", "10.0.0.1", fp, 4)
	b := f.register("b", "10.0.0.2", fp, 1)
	f.mustLease(fp, "k1") // a (4 free)
	f.mustLease(fp, "k2") // a (3 free vs 1)
	for range 4 {
		f.clock.Advance(20 * time.Second)
		f.heartbeat("b", "10.0.0.2", b, 0, verbs.Load{})
	}
	f.clock.Advance(11 * time.Second) // a last heard 91 s ago
	f.s.Sweep()
	if got := f.counter("pace_dispatch_workers_expired_total"); got != 1 {
		t.Fatalf("workers expired = %d, want 1", got)
	}
	if got := f.counter("pace_dispatch_leases_reclaimed_total"); got != 2 {
		t.Fatalf("leases reclaimed = %d, want 2", got)
	}
	if err := f.s.Heartbeat(verbs.HeartbeatRequest{WorkerID: a}, caller("a", "10.0.0.1")); err != ErrUnknownWorker {
		t.Fatalf("heartbeat after expiry: %v, want ErrUnknownWorker", err)
	}
	// The reclaimed keys are free: leasing k1 again is granted, on b.
	if g := f.mustLease(fp, "k1"); g.Endpoint != "10.0.0.2:6674" {
		t.Fatalf("k1 went to %s", g.Endpoint)
	}
}

// TestHeartbeatAt90SecondsKeepsTheEntry: the gap between 20 and 90 is
// deliberate; exactly 90 s is still live.
func TestHeartbeatAt90SecondsKeepsTheEntry(t *testing.T) {
	f := newFixture(t)
	a := f.register("a", "10.0.0.1", fp, 4)
	f.clock.Advance(90 * time.Second)
	f.s.Sweep()
	f.heartbeat("a", "10.0.0.1", a, 0, verbs.Load{})
	if f.counter("pace_dispatch_workers_expired_total") != 0 {
		t.Fatal("an entry heard from 90 s ago was expired")
	}
}

// TestReregistrationKeepsAges: "A re-registration refreshes version and
// capacity but keeps registered-age and last-picked-age" (pace-node §6.1).
func TestReregistrationKeepsAges(t *testing.T) {
	f := newFixture(t)
	c := caller("a", "10.0.0.1")
	req := verbs.RegisterRequest{Fingerprint: fp, Endpoint: "10.0.0.1:6674", Slots: 4,
		Capacity: verbs.Capacity{Version: "pace 1.0"}}
	id := f.registerReq(c, req)
	f.clock.Advance(time.Minute)
	f.heartbeat("a", "10.0.0.1", id, 0, verbs.Load{})
	f.mustLease(fp, "k")
	f.clock.Advance(time.Minute)
	f.heartbeat("a", "10.0.0.1", id, 1, verbs.Load{})
	req.Slots, req.Capacity.Version = 8, "pace 1.1"
	if again := f.registerReq(c, req); again != id {
		t.Fatalf("re-registration changed the worker id %s → %s", id, again)
	}
	w := f.s.Snapshot().Workers[0]
	if w.Version != "pace 1.1" || w.Slots != 8 {
		t.Fatalf("re-registration did not refresh: %+v", w)
	}
	if w.RegisteredAge != 2*time.Minute || !w.Picked || w.LastPickedAge != time.Minute {
		t.Fatalf("ages not kept: registered %v, last picked %v", w.RegisteredAge, w.LastPickedAge)
	}
	if got := f.counter("pace_dispatch_worker_registrations_total"); got != 2 {
		t.Fatalf("registrations = %d, want 2", got)
	}
}

func TestRegisterAfterExpiryIsANewRegistration(t *testing.T) {
	f := newFixture(t)
	id := f.register("a", "10.0.0.1", fp, 4)
	f.clock.Advance(2 * time.Minute) // not swept
	if again := f.register("a", "10.0.0.1", fp, 4); again == id {
		t.Fatal("a registration after expiry kept the dropped entry's id")
	}
	if w := f.s.Snapshot().Workers; len(w) != 1 || w[0].RegisteredAge != 0 {
		t.Fatalf("workers %+v", w)
	}
	if f.counter("pace_dispatch_workers_expired_total") != 1 {
		t.Fatal("the dropped entry was not counted expired")
	}
}

func TestWithdraw(t *testing.T) {
	f := newFixture(t)
	id := f.register("a", "10.0.0.1", fp, 4)
	g := f.mustLease(fp, "k")
	if err := f.s.Withdraw(verbs.WithdrawRequest{WorkerID: "no-such-id"}, caller("a", "10.0.0.1")); err != nil {
		t.Fatalf("unknown id: %v, want Ok", err)
	}
	if err := f.s.Withdraw(verbs.WithdrawRequest{WorkerID: id}, caller("b", "10.0.0.2")); err != nil || len(f.s.Snapshot().Workers) != 1 {
		t.Fatalf("another machine withdrew a's entry: %v", err)
	}
	if err := f.s.Withdraw(verbs.WithdrawRequest{WorkerID: id}, caller("a", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if got := f.counter("pace_dispatch_workers_withdrawn_total"); got != 1 {
		t.Fatalf("workers withdrawn = %d, want 1", got)
	}
	_, err := f.lease(fp, "k2")
	refusedWith(t, err, wire.CodeNoWorker)
	// The granted compile may still run: its lease is honoured until released.
	f.mustRelease(g, "k")
}

func TestJoiningVerbsNeedAProvenNode(t *testing.T) {
	f := newFixture(t)
	anon := Caller{Addr: netip.MustParseAddr("127.0.0.1")}
	if _, err := f.s.Register(verbs.RegisterRequest{Fingerprint: fp, Endpoint: "127.0.0.1:6674"}, anon, params); err != ErrIdentityRequired {
		t.Fatalf("register: %v", err)
	}
	if err := f.s.Heartbeat(verbs.HeartbeatRequest{WorkerID: "x"}, anon); err != ErrIdentityRequired {
		t.Fatalf("heartbeat: %v", err)
	}
	if r, _ := RefusalOf(ErrIdentityRequired); r.Code != wire.CodeNodeIdentityRequired {
		t.Fatalf("refusal %+v", r)
	}
}

func TestHeartbeatFromAnotherMachineIsUnknown(t *testing.T) {
	f := newFixture(t)
	id := f.register("a", "10.0.0.1", fp, 4)
	err := f.s.Heartbeat(verbs.HeartbeatRequest{WorkerID: id}, caller("b", "10.0.0.2"))
	if r, _ := RefusalOf(err); err != ErrUnknownWorker || r.Code != wire.CodeNoWorker {
		t.Fatalf("got %v (%+v)", err, r)
	}
}

// TestHeartbeatRebasesInFlight: the heartbeat's figure replaces the
// scheduler's, clamped to the registered slots.
func TestHeartbeatRebasesInFlight(t *testing.T) {
	f := newFixture(t)
	id := f.register("a", "10.0.0.1", fp, 4)
	f.mustLease(fp, "k1")
	f.mustLease(fp, "k2")
	f.heartbeat("a", "10.0.0.1", id, 1, verbs.Load{}) // one finished without a release yet
	if n := f.inFlight("a"); n != 1 {
		t.Fatalf("in-flight %d, want the reported 1", n)
	}
	f.heartbeat("a", "10.0.0.1", id, 99, verbs.Load{})
	if n := f.inFlight("a"); n != 4 {
		t.Fatalf("in-flight %d, want the report clamped to 4 slots", n)
	}
}

// TestEndpointMismatchCountedAndLoggedTwentyTimes: a registration whose
// endpoint host is not its source address is accepted, counted, and logged at
// INFO for the first twenty only (pace-node §6.1).
func TestEndpointMismatchCountedAndLoggedTwentyTimes(t *testing.T) {
	f := newFixture(t)
	for i := range 25 {
		f.registerReq(caller("a", "10.0.0.1"), verbs.RegisterRequest{Fingerprint: fp, Endpoint: "build-7.example:6674", Slots: uint32(i + 1)})
	}
	f.registerReq(caller("a", "10.0.0.1"), verbs.RegisterRequest{Fingerprint: "same", Endpoint: "10.0.0.1:6674"})
	f.registerReq(caller("b", "::ffff:10.0.0.2"), verbs.RegisterRequest{Fingerprint: "mapped", Endpoint: "10.0.0.2:6674"})
	if got := f.counter("pace_dispatch_worker_endpoint_mismatch_total"); got != 25 {
		t.Fatalf("mismatches = %d, want 25", got)
	}
	lines := strings.Split(strings.TrimSpace(f.logs.String()), "\n")
	if len(lines) != DefaultMismatchLogLimit {
		t.Fatalf("%d log lines, want %d", len(lines), DefaultMismatchLogLimit)
	}
	for _, want := range []string{"level=INFO", "build-7.example:6674", "source=10.0.0.1", fp} {
		if !strings.Contains(lines[0], want) {
			t.Fatalf("log line %q lacks %q", lines[0], want)
		}
	}
	if len(f.s.Snapshot().Workers) != 3 {
		t.Fatal("mismatched registrations must still be accepted")
	}
}

// TestDialHint: where the scheduler last saw the worker, only when the
// worker reports that address as its own (pace-wire §1.13).
func TestDialHint(t *testing.T) {
	for _, tc := range []struct {
		name, source, endpoint string
		own                    []string
		want                   string
	}{
		{"reported as its own", "192.168.1.5", "build-7.example:6674", []string{"192.168.1.5"}, "192.168.1.5:6674"},
		{"not reported as its own (NAT)", "203.0.113.9", "10.0.0.5:7000", []string{"10.0.0.5"}, ""},
		{"same as the endpoint", "10.0.0.5", "10.0.0.5:6674", []string{"10.0.0.5"}, ""},
		{"loopback is never a hint", "127.0.0.1", "10.0.0.5:6674", []string{"127.0.0.1", "10.0.0.5"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.registerReq(caller("a", tc.source), verbs.RegisterRequest{Fingerprint: fp, Endpoint: tc.endpoint, Slots: 2,
				Capacity: verbs.Capacity{InterfaceAddrs: tc.own}})
			if g := f.mustLease(fp, "k"); g.DialHint != tc.want || g.Endpoint != tc.endpoint {
				t.Fatalf("grant endpoint %q hint %q, want hint %q", g.Endpoint, g.DialHint, tc.want)
			}
		})
	}
}

func TestDeriveSlots(t *testing.T) {
	gib := uint64(1 << 30)
	for _, tc := range []struct {
		name string
		c    verbs.Capacity
		want int
	}{
		{"nothing known", verbs.Capacity{}, 1},
		{"workstation keeps 2 cores", verbs.Capacity{LogicalCores: verbs.Some[uint32](16), TotalMemory: verbs.Some(64 * gib)}, 14},
		{"dedicated keeps none", verbs.Capacity{LogicalCores: verbs.Some[uint32](16), TotalMemory: verbs.Some(64 * gib),
			NodeClass: verbs.Some(uint8(verbs.ClassDedicated))}, 16},
		{"memory bounds it", verbs.Capacity{LogicalCores: verbs.Some[uint32](16), TotalMemory: verbs.Some(8 * gib),
			NodeClass: verbs.Some(uint8(verbs.ClassDedicated))}, 8},
		{"reserved cores override the class", verbs.Capacity{LogicalCores: verbs.Some[uint32](16), ReservedCores: verbs.Some[uint32](4),
			NodeClass: verbs.Some(uint8(verbs.ClassDedicated))}, 12},
		{"never below one", verbs.Capacity{LogicalCores: verbs.Some[uint32](2)}, 1},
	} {
		if got := deriveSlots(tc.c); got != tc.want {
			t.Errorf("%s: %d slots, want %d", tc.name, got, tc.want)
		}
	}
}

// TestSixtyClientsOneDispatch: sixty clients missing the same key at once get
// one grant and fifty-nine already-in-flight answers, because the in-flight
// check comes before capacity (pace-node §6.2).
func TestSixtyClientsOneDispatch(t *testing.T) {
	f := newFixture(t)
	f.register("a", "10.0.0.1", fp, 64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted, duplicate := 0, 0
	for range 60 {
		wg.Go(func() {
			_, err := f.lease(fp, "0123456789abcdef0123456789abcdef")
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				granted++
			} else if r, ok := err.(wire.Refusal); ok && r.Code == wire.CodeAlreadyInFlight {
				duplicate++
			}
		})
	}
	wg.Wait()
	if granted != 1 || duplicate != 59 || f.counter("pace_dispatch_leases_duplicate_total") != 59 {
		t.Fatalf("granted %d, already-in-flight %d", granted, duplicate)
	}
}

func TestHistoryDeliveredPastTheHighWaterMark(t *testing.T) {
	f := newFixture(t)
	var got []uint64
	f.s.cfg.History = func(node string, buckets []verbs.HistoryBucket) {
		for _, b := range buckets {
			got = append(got, b.StartMs)
		}
	}
	id := f.register("a", "10.0.0.1", fp, 4)
	bucket := func(ms uint64) verbs.HistoryBucket { return verbs.HistoryBucket{StartMs: ms, SampleMs: 60000} }
	f.heartbeat("a", "10.0.0.1", id, 0, verbs.Load{History: []verbs.HistoryBucket{bucket(60000), bucket(120000)}})
	f.heartbeat("a", "10.0.0.1", id, 0, verbs.Load{History: []verbs.HistoryBucket{bucket(120000), bucket(180000)}})
	if err := f.s.Announce(verbs.AnnounceRequest{Load: verbs.Load{History: []verbs.HistoryBucket{bucket(180000), bucket(240000)}}},
		caller("a", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if want := []uint64{60000, 120000, 180000, 240000}; len(got) != len(want) || got[3] != want[3] || got[2] != want[2] {
		t.Fatalf("delivered %v, want %v (redelivered buckets counted once)", got, want)
	}
}
