package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// series is one well-behaved client's latencies and failures.
type series struct {
	mu     sync.Mutex
	lat    []time.Duration
	errors int
}

func (s *series) add(d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errors++
		return
	}
	s.lat = append(s.lat, d)
}

func (s *series) pct(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	sorted := slices.Clone(s.lat)
	slices.Sort(sorted)
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// phase is one measurement: the API client and the polite worker, and the most the server
// held while it ran.
type phase struct {
	api, proto series
	peak       sample
}

// measure runs the well-behaved client for d — with the attack running when atk is set.
func measure(ctx context.Context, srv *server, fix fixture, d time.Duration, atk *attack) *phase {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	wait := func() {}
	if atk != nil {
		wait = atk.start(ctx)
	}
	p := &phase{}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); every(ctx, 20*time.Millisecond, func() { timed(ctx, &p.api, srv.apiCall) }) }()
	go func() {
		defer wg.Done()
		every(ctx, 250*time.Millisecond, func() {
			timed(ctx, &p.proto, func(ctx context.Context) error { return politeHandshake(ctx, srv, fix.workers[0]) })
		})
	}()
	go func() { defer wg.Done(); every(ctx, time.Second, func() { p.peak = p.peak.max(srv.sample()) }) }()
	wg.Wait()
	wait()
	return p
}

// every calls f every interval until ctx ends.
func every(ctx context.Context, interval time.Duration, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// timed runs one call of the well-behaved client (at most 10 s) and records it, unless the
// phase ended during the call, which is not the server's doing.
func timed(phaseCtx context.Context, s *series, f func(context.Context) error) {
	ctx, cancel := context.WithTimeout(phaseCtx, 10*time.Second)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	if phaseCtx.Err() != nil {
		return
	}
	s.add(time.Since(start), err)
}

func (s *server) apiCall(ctx context.Context) error {
	_, err := s.api.ListProjects(ctx)
	return err
}

// politeHandshake is a worker's whole handshake on /proto, then an orderly close.
func politeHandshake(ctx context.Context, srv *server, w worker) error {
	c, err := wsconn.DialServer(ctx, srv.protoURL(), wsconn.DialOptions{})
	if err != nil {
		return err
	}
	defer c.Abort()
	role, out := session.NewPeer(session.PeerConfig{WorkerID: w.id, Tokens: session.NewPeerTokens([]wire.PeerToken{w.token})})
	if _, _, err := handshake.Run(ctx, c, role, out, nil); err != nil {
		return err
	}
	return c.Close(ctx)
}

// report prints both phases, what the attack did and what the server held.
func report(w io.Writer, base, under *phase, a *attack, before, after sample) {
	peak := under.peak
	fmt.Fprintf(w, "\n%-34s %8s %10s %10s %10s %7s\n", "well-behaved client", "calls", "p50", "p99", "max", "errors")
	for _, r := range []struct {
		name string
		s    *series
	}{{"API GET /projects, no attack", &base.api}, {"API GET /projects, under attack", &under.api},
		{"/proto handshake, no attack", &base.proto}, {"/proto handshake, under attack", &under.proto}} {
		fmt.Fprintf(w, "%-34s %8d %10v %10v %10v %7d\n", r.name, len(r.s.lat), r.s.pct(0.5).Round(time.Microsecond),
			r.s.pct(0.99).Round(time.Microsecond), r.s.pct(1).Round(time.Microsecond), r.s.errors)
	}
	avgHeld := time.Duration(0)
	if n := a.slowCut.Load(); n > 0 {
		avgHeld = time.Duration(a.slowHeldNanos.Load() / n)
	}
	fmt.Fprintf(w, "\nattack: %d violating sessions (%d answered Error 400 and closed), %d malformed openings (%d answered as owed),\n",
		a.violations.Load(), a.violationsAnswered.Load(), a.openings.Load(), a.openingsAnswered.Load())
	fmt.Fprintf(w, "        %d idle keep-alives opened (%d closed by the server), %d slow heads (%d cut, held %v on average), %d dial failures\n",
		a.idleOpened.Load(), a.idleClosed.Load(), a.slowHeads.Load(), a.slowCut.Load(), avgHeld.Round(time.Millisecond), a.failures.Load())
	if first, ok := a.firstFailure.Load().(string); ok {
		fmt.Fprintf(w, "        first failure to connect: %s\n", first)
	}
	m := after.metrics
	fmt.Fprintf(w, "server: refused %v (per address) + %v (total), evicted %v, log lines suppressed %v\n",
		m[`gradient_http_connections_refused_total{cap="per_address"}`], m[`gradient_http_connections_refused_total{cap="total"}`],
		m["gradient_http_connections_evicted_total"], m["gradient_log_lines_suppressed_total"])
	fmt.Fprintf(w, "server held (before / peak under attack / 5 s after): descriptors %d / %d / %d, RSS %d / %d / %d MiB, goroutines %d / %d / %d\n",
		before.fds, peak.fds, after.fds, before.rssKiB>>10, peak.rssKiB>>10, after.rssKiB>>10, before.goroutines, peak.goroutines, after.goroutines)
}
