package scheduler

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// TestConcurrentUse runs leases, releases, heartbeats, registrations,
// sweeps and snapshots at once (run it with -race). Every grant is
// released, so at the end nothing is outstanding and nothing is in flight.
func TestConcurrentUse(t *testing.T) {
	f := newFixture(t)
	workers := map[string]string{}
	for i := range 8 {
		node := "n" + strconv.Itoa(i)
		workers[node] = f.register(node, "10.0.1."+strconv.Itoa(i+1), fp, 4)
	}
	var granted, released, refused atomic.Int64
	var wg sync.WaitGroup
	for c := range 16 {
		wg.Go(func() {
			for i := range 300 {
				key := "k" + strconv.Itoa((c*7+i)%40) // shared keys: duplicates happen
				g, err := f.lease(fp, key)
				if err != nil {
					refused.Add(1)
					continue
				}
				granted.Add(1)
				if f.s.Release(verbs.ReleaseRequest{Token: g.Token, Key: key}) == nil {
					released.Add(1)
				}
			}
		})
	}
	stop := make(chan struct{})
	var upkeep sync.WaitGroup
	upkeep.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			for node, id := range workers {
				_ = f.s.Heartbeat(verbs.HeartbeatRequest{WorkerID: id, InFlight: 1}, caller(node, "10.0.0.9"))
			}
			f.register("n0", "10.0.1.1", fp, 4)
			f.s.Sweep()
			_ = f.s.Snapshot()
		}
	})
	wg.Wait()
	close(stop)
	upkeep.Wait()
	if granted.Load() != released.Load() || granted.Load()+refused.Load() != 16*300 {
		t.Fatalf("granted %d released %d refused %d", granted.Load(), released.Load(), refused.Load())
	}
	if got := f.counter("pace_dispatch_leases_granted_total"); got != uint64(granted.Load()) {
		t.Fatalf("granted counter %d, observed %d", got, granted.Load())
	}
	if f.s.Outstanding() != 0 {
		t.Fatalf("%d leases outstanding after every grant was released", f.s.Outstanding())
	}
	for node, id := range workers {
		f.heartbeat(node, "10.0.0.9", id, 0, verbs.Load{})
		if n := f.inFlight(node); n != 0 {
			t.Fatalf("%s in-flight %d", node, n)
		}
	}
}
