package scheduler

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// held is a grant the property test may release.
type held struct {
	grant verbs.LeaseGrant
	key   string
}

// TestPropertyInFlightBounded: through any sequence of register, lease,
// release, heartbeat, withdraw, clock advance and sweep, a machine's
// in-flight is never negative and never exceeds its registered slots,
// the lease indexes agree, and every refusal is one of the scheduler's.
func TestPropertyInFlightBounded(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		f := newFixture(t)
		nodes := []string{"n0", "n1", "n2"}
		fps := []string{"gcc", "clang", "rustc"}
		ids := map[string]string{} // worker id → node
		var grants []held
		for range rapid.IntRange(1, 120).Draw(rt, "steps") {
			switch rapid.IntRange(0, 6).Draw(rt, "action") {
			case 0:
				n := rapid.IntRange(0, 2).Draw(rt, "node")
				addr := "10.0.0." + string(rune('1'+n))
				id := f.register(nodes[n], addr, rapid.SampledFrom(fps).Draw(rt, "fp"), uint32(rapid.IntRange(0, 8).Draw(rt, "slots")))
				ids[id] = nodes[n]
			case 1:
				key := "k" + string(rune('a'+rapid.IntRange(0, 9).Draw(rt, "key")))
				g, err := f.lease(rapid.SampledFrom(fps).Draw(rt, "fp"), key, rapid.SliceOfN(rapid.SampledFrom([]string{"10.0.0.1:6674", "10.0.0.2:6674"}), 0, 2).Draw(rt, "excl")...)
				if err == nil {
					grants = append(grants, held{g, key})
				} else if r, ok := RefusalOf(err); !ok || !schedulerRefusal(r.Code) {
					rt.Fatalf("lease refused with %v", err)
				}
			case 2:
				if len(grants) > 0 {
					i := rapid.IntRange(0, len(grants)-1).Draw(rt, "grant")
					_ = f.s.Release(verbs.ReleaseRequest{Token: grants[i].grant.Token, Key: grants[i].key})
					grants = append(grants[:i], grants[i+1:]...)
				}
			case 3:
				for id, node := range ids {
					load := verbs.Load{CPUBusyPermille: verbs.Some(uint32(rapid.IntRange(0, 1000).Draw(rt, "cpu"))),
						Cordoned: rapid.Bool().Draw(rt, "cordon")}
					_ = f.s.Heartbeat(verbs.HeartbeatRequest{WorkerID: id, InFlight: uint32(rapid.IntRange(0, 12).Draw(rt, "inFlight")), Load: load},
						caller(node, "10.0.0.9"))
					break
				}
			case 4:
				f.clock.Advance(time.Duration(rapid.IntRange(0, 120).Draw(rt, "seconds")) * time.Second)
			case 5:
				f.s.Sweep()
			case 6:
				for id, node := range ids {
					_ = f.s.Withdraw(verbs.WithdrawRequest{WorkerID: id}, caller(node, "10.0.0.9"))
					delete(ids, id)
					break
				}
			}
			checkInvariants(rt, f.s)
		}
	})
}

func schedulerRefusal(c wire.Code) bool {
	switch c {
	case wire.CodeAlreadyInFlight, wire.CodeNoWorker, wire.CodeNoCapacity, wire.CodeWithdrawn:
		return true
	}
	return false
}

func checkInvariants(t *rapid.T, s *Scheduler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, m := range s.machines {
		if m.reported < 0 || m.pending < 0 {
			t.Fatalf("machine %s: reported %d pending %d", id, m.reported, m.pending)
		}
		if len(m.entries) > 0 && m.inFlight() > m.maxSlots() {
			t.Fatalf("machine %s: in-flight %d exceeds %d slots", id, m.inFlight(), m.maxSlots())
		}
	}
	if len(s.leases) != len(s.expiry) {
		t.Fatalf("%d leases but %d in the expiry heap", len(s.leases), len(s.expiry))
	}
	for i, l := range s.expiry {
		if l.heapIndex != i || s.leases[l.key] != l {
			t.Fatalf("expiry heap entry %d out of step", i)
		}
	}
	for fp, g := range s.byFingerprint {
		for i, e := range *g {
			if e.groupIndex != i || e.key.fingerprint != fp || s.entries[e.key] != e || s.byID[e.id] != e {
				t.Fatalf("fingerprint index out of step at %s[%d]", fp, i)
			}
			if free, why := offerable(e); free != e.free || why != e.why {
				t.Fatalf("%s[%d]: cached %d/%s, offerable now %d/%s", fp, i, e.free, e.why, free, why)
			}
			if parent := (i - 1) / 2; i > 0 && g.Less(i, parent) {
				t.Fatalf("%s: heap order broken at %d", fp, i)
			}
		}
	}
	if n := len(s.entries); n != len(s.byID) {
		t.Fatalf("%d entries but %d ids", n, len(s.byID))
	}
}
