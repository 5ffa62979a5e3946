// Command dispatch measures pace-node dispatch against its performance goals, all on loopback
// in one run (make bench runs it through scripts/bench.sh):
//
//  1. LEASE+RELEASE round trips per second against one pace-node from -conns (16) concurrent
//     clients (bench/leaseload), goal >= 20,000/s. Two modes: persistent connections (one for
//     LEASE, one for RELEASE per client: the scheduler's own rate) and a fresh TCP connection
//     per LEASE and per RELEASE (what pace-cc does). Best of -rounds runs of -duration each.
//     After every run the node's lease counters are checked against the client's count, and
//     the node's own CPU time per round trip is read from /proc (the clients share the cores).
//     Each node run is followed at once by the same client against `leaseload -serve-canned`,
//     a server that answers with one real grant and neither schedules nor signs: the floor this
//     machine and client set, so node/floor says what the node itself costs. Then the Go
//     benchmarks of bench_rt_test.go and bench_test.go in internal/pace/scheduler: one lease
//     signature, one in-process decision, and round trips over loopback to a minimal frame loop.
//  2. Per-TU overhead of a dispatched compile over a local one, Redis 7.0.15, goal: overhead
//     <= 2x the local preprocess cost per TU. One make -j$(nproc) build (MALLOC=libc; deps
//     hiredis, linenoise, lua, hdr_histogram and src, every compile through CC) records each
//     compile's argv and directory through this same program as the CC wrapper (cc-log). Then
//     every recorded compile is replayed in build order, one at a time, four ways back to back:
//     plain gcc; preprocess only (-E -o /dev/null in place of -c/-o and the depfile flags);
//     `pace-cc gcc` compiling here (no PACE_SCHEDULER); `pace-cc gcc` with dispatch, leased and
//     compiled by a node's worker over loopback (--slots=2). Both pace-cc runs are misses
//     against a fresh node tier each (fresh state, cache and HOME). Back to back, whatever else
//     loads the machine weighs on all four alike. Two overheads are reported, each against the
//     preprocess-only time: dispatched minus compiled-here (what dispatch itself costs:
//     preprocessing for dispatch, LEASE, compression, COMPILE, RELEASE) and dispatched minus
//     plain gcc (which also counts the cache's key probe, FETCH and STORE), over the TUs
//     dispatched in every round; a TU whose remote compile printed diagnostics is compiled here
//     again by design and is reported apart. Redis compiles with -g, which pace-cc dispatches
//     only with -gno-column-info, so the build adds CFLAGS=-gno-column-info. -tu-rounds > 1
//     replays again against fresh nodes and keeps each TU's fastest of each way.
//
// Run it from the repository's top directory. Every flag defaults from the environment knob
// the shell script it replaces read: ROUNDS=3 DURATION=3s CONNS=16 TU_ROUNDS=1, ONLY=lease or
// ONLY=tu to run one part, and PACE_CORPUS=<dir with Redis> (testdata/corpus/README.md). It
// exits 1 when a counter check did not hold or no TU was dispatched.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

type config struct {
	rounds, conns, tuRounds int
	duration                string
	only                    string // "", "lease" or "tu"
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "cc-log" {
		os.Exit(ccLog(os.Args[2:]))
	}
	var c config
	flag.IntVar(&c.rounds, "rounds", envInt("ROUNDS", 3), "LEASE+RELEASE runs per mode, the best kept")
	flag.StringVar(&c.duration, "duration", envString("DURATION", "3s"), "length of one LEASE+RELEASE run")
	flag.IntVar(&c.conns, "conns", envInt("CONNS", 16), "concurrent LEASE+RELEASE clients")
	flag.IntVar(&c.tuRounds, "tu-rounds", envInt("TU_ROUNDS", 1), "replays of the Redis build against fresh nodes")
	flag.StringVar(&c.only, "only", envString("ONLY", ""), `"lease" or "tu" to run one part`)
	flag.Parse()
	if _, err := time.ParseDuration(c.duration); err != nil || c.rounds < 1 || c.conns < 1 || c.tuRounds < 1 ||
		(c.only != "" && c.only != "lease" && c.only != "tu") {
		fmt.Fprintln(os.Stderr, "dispatch: -rounds, -conns and -tu-rounds must be positive, -duration a duration, -only lease or tu")
		os.Exit(2)
	}
	b, err := newBench(c)
	if err == nil {
		err = b.run()
		b.cleanup()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-dispatch:", err)
		os.Exit(1)
	}
	if b.failed {
		os.Exit(1)
	}
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}
