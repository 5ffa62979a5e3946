package scheduler

import (
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// benchScheduler is a fleet of machines × toolchains entries, each with
// room enough that no LEASE is refused for capacity.
func benchScheduler(b *testing.B, machines, toolchains int) *Scheduler {
	s, err := New(Config{ClusterID: "bench", Signer: trivialSigner{}, HeartbeatTimeout: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	for m := range machines {
		addr := netip.AddrFrom4([4]byte{10, 1, byte(m >> 8), byte(m)})
		c := Caller{NodeID: "n" + strconv.Itoa(m), Addr: addr}
		for tc := range toolchains {
			req := verbs.RegisterRequest{Fingerprint: "fp" + strconv.Itoa(tc), Endpoint: addr.String() + ":6674", Slots: 1 << 16}
			if _, err := s.Register(req, c, Params{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return s
}

// BenchmarkLeaseRelease is one LEASE and its RELEASE, decided in process
// with a trivial signer, from 16 concurrent clients (the dispatch
// benchmark's shape: ≥ 20,000 round trips/s over loopback is the goal, so
// the decision must cost a few µs at most).
func BenchmarkLeaseRelease(b *testing.B) {
	for _, fleet := range []struct{ machines, toolchains int }{{1, 1}, {300, 3}} {
		b.Run(strconv.Itoa(fleet.machines*fleet.toolchains)+"-entries", func(b *testing.B) {
			s := benchScheduler(b, fleet.machines, fleet.toolchains)
			var next atomic.Uint64
			b.SetParallelism(8) // 16 goroutines on 2 cores
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					key := strconv.FormatUint(next.Add(1), 16)
					g, err := s.Lease(verbs.LeaseRequest{Fingerprint: "fp0", Key: key}, Params{})
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Release(verbs.ReleaseRequest{Token: g.Token, Key: key}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkServeLeaseRelease adds what the node's handler does around
// the decision: parsing the fields and appending the grant body.
func BenchmarkServeLeaseRelease(b *testing.B) {
	s := benchScheduler(b, 300, 3)
	var next atomic.Uint64
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var buf, payload []byte
		fields := make([][]byte, 0, 5)
		for pb.Next() {
			key := strconv.FormatUint(next.Add(1)+1<<40, 16)
			payload = verbs.LeaseRequest{Fingerprint: "fp1", Key: key}.Append(payload[:0])
			fields, _ = wire.SplitFields(fields, payload, verbs.LeaseArity)
			var err error
			if buf, err = s.Serve(buf[:0], wire.OpLease, fields, Caller{}, Params{}); err != nil {
				b.Fatal(err)
			}
			g, err := verbs.ParseLeaseGrant(buf)
			if err != nil {
				b.Fatal(err)
			}
			payload = verbs.ReleaseRequest{Token: g.Token, Key: key}.Append(payload[:0])
			fields, _ = wire.SplitFields(fields, payload, verbs.ReleaseArity)
			if _, err := s.Serve(buf[:0], wire.OpRelease, fields, Caller{}, Params{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
