// Command leaseload is the load generator behind `make bench`'s dispatch benchmark: it drives
// one pace-node's scheduler with LEASE+RELEASE round trips from many concurrent clients and
// prints round trips per second, latency and every refusal by its code.
//
// Each client loops: LEASE a fresh random key (hex of 32 random bytes, so no key is ever
// already-in-flight) for one toolchain fingerprint, parse the grant, RELEASE it. Requests are
// not pipelined. Two modes: persistent connections (one for LEASE, one for RELEASE per client:
// the scheduler's own throughput) and -fresh-conns (a new TCP connection per LEASE and per
// RELEASE, which is what pace-cc does). A round trip that has started is always finished, so
// every lease granted is released and the node's counters can be checked against this count.
//
// With -serve-canned it measures nothing: it serves one real grant, canned, from a server that
// neither schedules nor signs, so that the same client against it gives the floor this machine
// sets (see serveCanned).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

type config struct {
	addr, fingerprint string
	conns             int
	duration, timeout time.Duration
	freshConns        bool
}

func main() {
	var c config
	flag.StringVar(&c.addr, "addr", "127.0.0.1:6674", "pace-node node port")
	flag.StringVar(&c.fingerprint, "fingerprint", "", "toolchain fingerprint to lease for (pace-cc --print-toolchain-fingerprint gcc)")
	flag.IntVar(&c.conns, "conns", 16, "concurrent clients")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "measurement time")
	flag.DurationVar(&c.timeout, "timeout", 10*time.Second, "an exchange fails when it has not finished within timeout/2 to timeout")
	flag.BoolVar(&c.freshConns, "fresh-conns", false, "a new TCP connection per LEASE and per RELEASE (as pace-cc does)")
	cannedListen := flag.String("serve-canned", "", "instead of measuring, take one grant from -addr and serve it canned on this host:port (the floor to compare the node with)")
	flag.Parse()
	if c.fingerprint == "" || c.conns < 1 || c.duration <= 0 || c.timeout <= 0 {
		fmt.Fprintln(os.Stderr, "leaseload: -fingerprint is required; -conns, -duration and -timeout must be positive")
		os.Exit(2)
	}
	if *cannedListen != "" {
		// serveCanned serves until killed: it returns only when it fails.
		fmt.Fprintln(os.Stderr, "leaseload:", serveCanned(c, *cannedListen))
		os.Exit(1)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "leaseload:", err)
		os.Exit(1)
	}
}

// tally is what one client saw: latencies of whole round trips (ns) and refusals by code.
type tally struct {
	lat             []int64
	granted         int
	released        int
	leaseRefused    map[wire.Code]int
	releaseRefused  map[wire.Code]int
	refusedRequests int
}

func newTally() *tally {
	return &tally{lat: make([]int64, 0, 1<<16), leaseRefused: map[wire.Code]int{}, releaseRefused: map[wire.Code]int{}}
}

func (t *tally) merge(o *tally) {
	t.lat = append(t.lat, o.lat...)
	t.granted += o.granted
	t.released += o.released
	t.refusedRequests += o.refusedRequests
	for c, n := range o.leaseRefused {
		t.leaseRefused[c] += n
	}
	for c, n := range o.releaseRefused {
		t.releaseRefused[c] += n
	}
}

func run(c config) error {
	cpuBefore := cpuTime()
	total, elapsed, err := measure(c)
	if err != nil {
		return err
	}
	cpu := cpuTime() - cpuBefore
	if total.granted == 0 {
		return fmt.Errorf("no lease granted (refusals: %s)", codes(total.leaseRefused))
	}
	slices.Sort(total.lat)
	pct := func(p float64) float64 {
		return float64(total.lat[min(len(total.lat)-1, int(p*float64(len(total.lat))))]) / 1e3
	}
	mode := "persistent"
	if c.freshConns {
		mode = "fresh-conns"
	}
	rts := len(total.lat)
	fmt.Printf("mode=%s conns=%d roundtrips/s=%.0f p50=%.1fus p99=%.1fus refusals=%d roundtrips=%d granted=%d released=%d lease_refused=%s release_refused=%s elapsed=%.3fs client_cpu_us_per_rt=%.1f\n",
		mode, c.conns, float64(rts)/elapsed.Seconds(), pct(0.50), pct(0.99), total.refusedRequests, rts,
		total.granted, total.released, codes(total.leaseRefused), codes(total.releaseRefused), elapsed.Seconds(),
		float64(cpu.Microseconds())/float64(rts))
	return nil
}

// cpuTime is this process's user plus system CPU time so far, so the summary can say what the
// load generator itself cost per round trip (it shares the machine's cores with the node).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// codes renders refusal counts as code:n pairs, "-" when there were none.
func codes(m map[wire.Code]int) string {
	if len(m) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(m))
	for c, n := range m {
		parts = append(parts, fmt.Sprintf("%s:%d", c, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// measure runs c.conns clients until the deadline; elapsed runs until the last one finished
// its last round trip, so the rate counts only time the work took.
func measure(c config) (*tally, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	var wg sync.WaitGroup
	results := make([]*tally, c.conns)
	errs := make([]error, c.conns)
	start := time.Now()
	for w := range c.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[w], errs[w] = client(ctx, c)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	total := newTally()
	for w := range results {
		if errs[w] != nil {
			return nil, 0, errs[w]
		}
		total.merge(results[w])
	}
	return total, elapsed, nil
}

func client(ctx context.Context, c config) (*tally, error) {
	s, err := newSession(c)
	if err != nil {
		return nil, err
	}
	defer s.close()
	t := newTally()
	for ctx.Err() == nil {
		start := time.Now()
		done, err := s.roundTrip(t)
		if err != nil {
			return nil, err
		}
		if done {
			t.lat = append(t.lat, time.Since(start).Nanoseconds())
		}
	}
	return t, nil
}
