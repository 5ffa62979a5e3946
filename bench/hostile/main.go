// Command hostile is the pace side of `make soak`: it starts a pace-kv or a pace-node (or
// attacks one already running at -addr), runs a well-behaved client alone for -duration, then
// for -duration again beside a bounded hostile mix from other loopback addresses — connections
// trickling a header a byte a second, idle connections, STOREs sent half-way, pipelined wrong
// AUTHs, 200 MiB STOREs — and prints the polite client's latency in both phases, the daemon's
// peak RSS, and what its counters say became of the attackers.
//
//	go run ./bench/hostile -target=kv -duration=60s
//	go run ./bench/hostile -target=node -duration=60s
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

// config is the command line.
type config struct {
	target, bin, addr, metrics, password string
	duration                             time.Duration
	sources                              int // attacker source addresses: 127.0.0.2 on
	mix                                  mix
}

func main() {
	var c config
	flag.StringVar(&c.target, "target", "kv", "kv (pace-kv) or node (pace-node's node port)")
	flag.StringVar(&c.bin, "bin", "", "the daemon's binary (default bin/pace-kv or bin/pace-node, built when missing)")
	flag.StringVar(&c.addr, "addr", "", "attack a daemon already running here instead of starting one (host:port)")
	flag.StringVar(&c.metrics, "metrics", "", "with -addr: its /metrics host:port")
	flag.StringVar(&c.password, "password", "", "with -addr: the pace-kv password (a started pace-kv gets one of its own)")
	flag.DurationVar(&c.duration, "duration", 60*time.Second, "length of each phase: polite alone, then polite beside the attack")
	flag.IntVar(&c.sources, "sources", 8, "loopback source addresses the attackers use (127.0.0.2 …)")
	flag.IntVar(&c.mix.slow, "slow", 300, "connections trickling a header one byte a second")
	flag.IntVar(&c.mix.idle, "idle", 300, "connections that send nothing")
	flag.IntVar(&c.mix.half, "half", 4, "connections sending half of a 64 MiB STORE, then nothing")
	flag.IntVar(&c.mix.guessers, "guessers", 4, "connections pipelining wrong AUTHs")
	flag.IntVar(&c.mix.big, "big", 2, "connections sending 200 MiB STOREs back to back")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	d, err := startDaemon(c)
	if err != nil {
		return err
	}
	defer d.stop()
	fmt.Printf("target=%s addr=%s duration=%s attackers: slow=%d idle=%d half=%d guessers=%d big=%d from %d addresses\n",
		c.target, d.addr, c.duration, c.mix.slow, c.mix.idle, c.mix.half, c.mix.guessers, c.mix.big, c.sources)
	alone := phase(d, c, false)
	fmt.Println(alone.line("alone"))
	attacked := phase(d, c, true)
	fmt.Println(attacked.line("attack"))
	fmt.Println(d.counters())
	fmt.Printf("summary target=%s polite_p99_ms alone=%.2f attack=%.2f\n", c.target, ms(alone.p(0.99)), ms(attacked.p(0.99)))
	return nil
}

// phase runs the polite client for c.duration, beside the attack when attacked.
func phase(d *daemon, c config, attacked bool) result {
	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	var a *attack
	if attacked {
		a = startAttack(ctx, d, c)
	}
	rss := d.watchRSS(ctx)
	r := politeLoop(ctx, d)
	r.peakRSS = <-rss
	if a != nil {
		a.wait()
		r.attack = a.summary()
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
