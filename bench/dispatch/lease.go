package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// leasePart is part 1: LEASE+RELEASE round trips against one node, each run followed by the
// canned floor, then the scheduler's in-process benchmarks.
func (b *bench) leasePart() error {
	const slots = 64 // more than the clients: no LEASE may be refused for capacity
	n, err := b.startNode("lease", fmt.Sprintf("--slots=%d", slots))
	if err != nil {
		return err
	}
	if ready, _ := waitReady(n.log, "ready", nil); !strings.Contains(ready, fmt.Sprintf(" slots=%d ", slots)) {
		return fmt.Errorf("pace-node did not take --slots=%d:\n%s", slots, ready)
	}
	fp, err := output(append(os.Environ(), "HOME="+b.work), "bin/pace-cc", "--print-toolchain-fingerprint", "gcc")
	if err != nil {
		return err
	}
	b.fp = strings.Fields(fp + " ")[0]
	tck, err := output(nil, "getconf", "CLK_TCK")
	if err != nil {
		return err
	}
	b.hz, _ = strconv.ParseFloat(tck, 64)
	canned, err := b.startCanned(n)
	if err != nil {
		return err
	}
	fmt.Printf("\nLEASE+RELEASE round trips: %d clients, --slots=%d, best of %d x %s (goal >= 20000/s)\n", b.c.conns, slots, b.c.rounds, b.c.duration)
	fmt.Println("  each run against the node is followed by one against the canned floor (same client, a server that neither schedules nor signs)")
	for i, mode := range []string{"persistent", "fresh-conns"} {
		fmt.Println([]string{"persistent connections:", "a fresh connection per LEASE and per RELEASE (pace-cc's pattern):"}[i])
		if b.bestRates[i], err = b.leaseMode(mode, n, canned); err != nil {
			return err
		}
	}
	if !b.failed {
		fmt.Println("  check: after every node run its granted and released counters had moved by exactly the client's counts, its refusal counters by the client's refusals")
	}
	canned.p.stop()
	n.p.stop()
	return schedulerBenchmarks()
}

// schedulerBenchmarks runs the scheduler's own benchmarks and prints their result lines.
func schedulerBenchmarks() error {
	fmt.Println("in process (internal/pace/scheduler): one Ed25519 lease signature; one LEASE+RELEASE decided (trivial signer, 16")
	fmt.Println("goroutines); and 16 clients over loopback against a minimal frame loop in the same process (canned grant, the")
	fmt.Println("scheduler with a trivial signer, the scheduler signing with Ed25519):")
	cmd := exec.Command("go", "test", "-run=^$", "-bench=^Benchmark(LeaseSign|LeaseRelease|LoopbackLeaseRelease)$", "-benchtime=1s", "./internal/pace/scheduler/")
	out, _ := cmd.CombinedOutput() // a failed benchmark prints FAIL, which is shown
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "Benchmark") || strings.HasPrefix(line, "FAIL") {
			fmt.Println("  " + line)
		}
	}
	return nil
}

// canned is leaseload -serve-canned on loopback with one grant taken from the node.
type canned struct {
	p    *proc
	addr string
}

func (b *bench) startCanned(n *node) (*canned, error) {
	out := filepath.Join(b.work, "canned.out")
	p, err := b.start(out, b.leaseload, "-addr="+n.addr, "-fingerprint="+b.fp, "-serve-canned=127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	line, err := waitReady(out, "canned-listen=", p)
	if err != nil {
		return nil, fmt.Errorf("leaseload -serve-canned did not start: %w", err)
	}
	return &canned{p: p, addr: strings.TrimPrefix(strings.TrimSpace(line), "canned-listen=")}, nil
}

// leaseMode runs -rounds runs against the node, each followed at once by one against the
// canned server, prints both bests and their ratio, and returns the node's best.
func (b *bench) leaseMode(mode string, n *node, c *canned) (int, error) {
	var flags []string
	if mode == "fresh-conns" {
		flags = []string{"-fresh-conns"}
	}
	nodeBest, floorBest := 0, 0
	for round := 1; round <= b.c.rounds; round++ {
		fmt.Printf("  run %d:\n", round)
		rate, err := b.nodeRun(n, flags)
		if err != nil {
			return 0, err
		}
		nodeBest = max(nodeBest, rate)
		if rate, err = b.floorRun(c, flags); err != nil {
			return 0, err
		}
		floorBest = max(floorBest, rate)
	}
	fmt.Printf("  best: node %d/s, canned floor %d/s, node/floor %.2f\n", nodeBest, floorBest, float64(nodeBest)/float64(floorBest))
	return nodeBest, nil
}

// runLeaseload runs one measurement against addr and returns its summary line.
func (b *bench) runLeaseload(addr string, flags []string) (string, error) {
	args := append([]string{"-addr=" + addr, "-fingerprint=" + b.fp, fmt.Sprintf("-conns=%d", b.c.conns), "-duration=" + b.c.duration}, flags...)
	return output(nil, b.leaseload, args...)
}

// nodeRun is one run against the node: its line with the node's CPU time per round trip, and
// a check of the node's counters against the client's; it returns the run's rate.
func (b *bench) nodeRun(n *node, flags []string) (int, error) {
	g0, r0, x0, err := n.leaseCounters()
	if err != nil {
		return 0, err
	}
	t0 := cpuTicks(n.p)
	line, err := b.runLeaseload(n.addr, flags)
	if err != nil {
		return 0, err
	}
	g1, r1, x1, err := n.leaseCounters()
	if err != nil {
		return 0, err
	}
	t1 := cpuTicks(n.p)
	cg, cr := int64(fieldInt(line, "granted")), int64(fieldInt(line, "released"))
	cx := int64(codeSum(field(line, "lease_refused")) + codeSum(field(line, "release_refused")))
	fmt.Printf("    node:   %s node_cpu_us_per_rt=%s [%s]\n", line, b.perRoundTrip(t1-t0, fieldInt(line, "roundtrips")), load())
	if g1-g0 != cg || r1-r0 != cr || x1-x0 != cx {
		fmt.Printf("    MISMATCH: node counted granted +%d released +%d refused +%d; client granted %d released %d refused %d\n",
			g1-g0, r1-r0, x1-x0, cg, cr, cx)
		b.failed = true
	}
	return fieldInt(line, "roundtrips/s"), nil
}

// floorRun is the same client against the canned server; it returns the run's rate.
func (b *bench) floorRun(c *canned, flags []string) (int, error) {
	t0 := cpuTicks(c.p)
	line, err := b.runLeaseload(c.addr, flags)
	if err != nil {
		return 0, err
	}
	t1 := cpuTicks(c.p)
	head := strings.Join(strings.Fields(line)[:min(5, len(strings.Fields(line)))], " ")
	fmt.Printf("    canned: %s client_cpu_us_per_rt=%s server_cpu_us_per_rt=%s [%s]\n", head,
		field(line, "client_cpu_us_per_rt"), b.perRoundTrip(t1-t0, fieldInt(line, "roundtrips")), load())
	return fieldInt(line, "roundtrips/s"), nil
}

// perRoundTrip is CPU ticks per round trip in microseconds, as text.
func (b *bench) perRoundTrip(ticks int64, roundTrips int) string {
	return fmt.Sprintf("%.1f", float64(ticks)/b.hz*1e6/float64(roundTrips))
}

// codeSum is the total of a code:n,code:n list ("-" is none).
func codeSum(list string) int {
	sum := 0
	for _, pair := range strings.Split(list, ",") {
		if _, n, ok := strings.Cut(pair, ":"); ok {
			v, _ := strconv.Atoi(n)
			sum += v
		}
	}
	return sum
}
