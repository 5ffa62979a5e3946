// Command hostilegradient is the gradient half of `make soak`: it starts a real
// gradient-server, measures a well-behaved client (API calls on a keep-alive connection and
// complete worker handshakes on /proto) first alone and then for -duration while a bounded
// hostile mix runs against the same port — workers violating their sessions, malformed first
// messages, idle keep-alive connections from several addresses, slowly dripped request heads —
// and prints the well-behaved client's p50 and p99 in both phases with what the attack did and
// what the server held (descriptors, resident memory, goroutines).
//
// It asserts nothing about timing; the numbers are the result.
//
//	go run ./bench/hostilegradient -duration=60s
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"
)

type config struct {
	serverBin  string
	serverArgs string
	baseline   time.Duration
	duration   time.Duration
	mix        mix
}

func main() {
	c := config{mix: defaultMix}
	flag.StringVar(&c.serverBin, "server-bin", "", "gradient-server binary (default: build ./cmd/gradient-server into a temporary directory)")
	flag.StringVar(&c.serverArgs, "server-args", "--max-http-connections=512 --http-idle-timeout=20s --http-header-timeout=5s",
		"extra flags for gradient-server, space separated")
	flag.DurationVar(&c.baseline, "baseline", 10*time.Second, "how long the well-behaved client runs alone first")
	flag.DurationVar(&c.duration, "duration", 60*time.Second, "how long the attack runs")
	flag.IntVar(&c.mix.violators, "violators", c.mix.violators, "workers violating their sessions, one after another each")
	flag.IntVar(&c.mix.malformed, "malformed", c.mix.malformed, "connections sending malformed first messages, one after another each")
	flag.IntVar(&c.mix.idle, "idle", c.mix.idle, "idle keep-alive connections held open (reopened when closed)")
	flag.IntVar(&c.mix.slow, "slow", c.mix.slow, "connections dripping a request head, one byte every 500 ms")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "hostilegradient:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	srv, err := startServer(ctx, c.serverBin, strings.Fields(c.serverArgs))
	if err != nil {
		return err
	}
	defer srv.stop()
	fix, err := srv.fixtures(ctx, c.mix.violators+1)
	if err != nil {
		return err
	}
	fmt.Printf("gradient-server on %s, %s; baseline %v, attack %v\n", srv.addr, c.serverArgs, c.baseline, c.duration)
	before := srv.sample()
	base := measure(ctx, srv, fix, c.baseline, nil)
	mid := srv.sample()
	atk := &attack{srv: srv, fix: fix, mix: c.mix}
	under := measure(ctx, srv, fix, c.duration, atk)
	end := srv.sample()
	pause(ctx, 5*time.Second) // the attack's connections close; what stays is what leaked
	after := srv.sample()
	report(os.Stdout, base, under, atk, before, after)
	cpu := func(a, b sample) float64 {
		return b.metrics["process_cpu_seconds_total"] - a.metrics["process_cpu_seconds_total"]
	}
	fmt.Printf("server CPU: %.1f s in the %v baseline, %.1f s in the %v attack\n", cpu(before, mid), c.baseline, cpu(mid, end), c.duration)
	return nil
}
