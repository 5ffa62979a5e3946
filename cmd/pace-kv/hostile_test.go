package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/promexport/promexporttest"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// These tests play an attacker on the same network against the real binary: slow and idle
// connections, password guessing, large concurrent STOREs. Each shows a well-behaved client is
// still served and the attacker is cut, refused or slowed, and counted.

const politeBound = 100 * time.Millisecond

func (p *proc) metric(t *testing.T, series string, labels ...string) float64 {
	t.Helper()
	return promexporttest.Value(t, "http://"+p.metrics+"/metrics", series, labels...)
}

// dialFrom opens a TCP connection to addr from a loopback source such as 127.0.0.2.
func dialFrom(src, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return d.Dial("tcp", addr)
}

func passwordFile(t *testing.T, secret string) string {
	t.Helper()
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return pw
}

// politeRound is one well-behaved exchange on a fresh connection (AUTH, FETCH), timed.
func politeRound(p *proc, secret string) (time.Duration, error) {
	start := time.Now()
	_, _, err := kvclient.Fetch(context.Background(), kvclient.Options{Addr: p.addr, Password: secret, Timeout: 5 * time.Second}, "polite")
	return time.Since(start), err
}

// politeRounds runs n polite rounds, gap apart, and fails the test on any error or any round
// slower than politeBound; it returns the slowest.
func politeRounds(t *testing.T, p *proc, secret string, n int, gap time.Duration) time.Duration {
	t.Helper()
	var slowest time.Duration
	for range n {
		took, err := politeRound(p, secret)
		if err != nil {
			t.Fatalf("polite client refused: %v", err)
		}
		slowest = max(slowest, took)
		time.Sleep(gap)
	}
	if slowest > politeBound {
		t.Fatalf("polite client took %v, want at most %v", slowest, politeBound)
	}
	return slowest
}

// attack holds one attacker connection: it trickles a header a byte a second (slow) or sends
// nothing (idle), and reports when the server closed it.
func attack(conn net.Conn, slow bool, closed chan<- time.Duration, start time.Time) {
	if slow {
		go func() {
			for _, b := range wire.AppendRequest(nil, wire.OpFetch, []byte("k")) {
				if _, err := conn.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(time.Second)
			}
		}()
	}
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	io.Copy(io.Discard, conn)
	closed <- time.Since(start)
	conn.Close()
}

func TestSlowAndIdleConnectionsLockNobodyOut(t *testing.T) {
	const secret, attackers, addrs = "sesame", 1030, 10
	p := launch(t, "--metrics=127.0.0.1:0", "--requirepass-file="+passwordFile(t, secret),
		"--frame-timeout=2500ms", "--auth-timeout=3s", "--idle-timeout=10s")
	start := time.Now()
	closed := make(chan time.Duration, attackers)
	for i := range attackers {
		conn, err := dialFrom(fmt.Sprintf("127.0.0.%d", 2+i%addrs), p.addr)
		if err != nil {
			t.Fatal(err)
		}
		go attack(conn, i%2 == 0, closed, start)
	}
	// Connections that have waited a second may be displaced by a newcomer (frameserver).
	time.Sleep(1100 * time.Millisecond)
	slowest := politeRounds(t, p, secret, 20, 5*time.Millisecond)
	var last time.Duration
	for range attackers {
		select {
		case d := <-closed:
			last = max(last, d)
		case <-time.After(10 * time.Second):
			t.Fatal("an attacker connection is still open after every deadline passed")
		}
	}
	stalled := p.metric(t, "pace_connections_closed_total", "reason", "stalled")
	authTimeout := p.metric(t, "pace_connections_closed_total", "reason", "auth_timeout")
	displaced := p.metric(t, "pace_connections_closed_total", "reason", "displaced")
	rejected := p.metric(t, "pace_connections_rejected_total")
	t.Logf("polite client's slowest round %v with %d attacker connections; attackers gone after %v: %v stalled, %v auth_timeout, %v displaced, %v rejected",
		slowest, attackers, last, stalled, authTimeout, displaced, rejected)
	if rejected != attackers-1024 || displaced < 1 || stalled+authTimeout+displaced != 1024 {
		t.Fatalf("attacker outcomes do not add up: %v stalled + %v auth_timeout + %v displaced, %v rejected", stalled, authTimeout, displaced, rejected)
	}
	if stalled < 512-displaced || authTimeout < 512-displaced {
		t.Fatalf("slow senders must end stalled and idle ones at the pre-auth deadline: %v, %v", stalled, authTimeout)
	}
}

func TestOneAddressCannotTakeEverySlot(t *testing.T) {
	p := launch(t, "--metrics=127.0.0.1:0")
	var conns []net.Conn
	for range 300 {
		conn, err := dialFrom("127.0.0.2", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for p.metric(t, "pace_connections_rejected_per_address_total") < 300-128 {
		if time.Now().After(deadline) {
			t.Fatalf("per-address rejections: %v", p.metric(t, "pace_connections_rejected_per_address_total"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	politeRounds(t, p, "", 5, 0)
	// The polite connections close as the server reads their end; the hog's 128 stay.
	for got := p.metric(t, "pace_kv_connections_open"); got != 128; got = p.metric(t, "pace_kv_connections_open") {
		if time.Now().After(deadline) {
			t.Fatalf("%v connections open, want 128 from the one address", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := p.metric(t, "pace_connections_rejected_per_address_total"); got != 300-128 {
		t.Fatalf("%v per-address rejections, want %d", got, 300-128)
	}
}

// guess keeps one connection from src busy guessing: n wrong AUTHs in one write, replies read
// until the server closes it (or until, a safety net). It returns how many were checked and refused, and how
// many refused unchecked.
func guess(src, addr string, n int, until time.Time) (checked, unchecked int, err error) {
	conn, err := dialFrom(src, addr)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	var frames []byte
	for i := range n {
		frames = wire.AppendRequest(frames, wire.OpAuth, []byte{1}, nil, fmt.Appendf(nil, "guess-%d", i))
	}
	go conn.Write(frames)
	conn.SetReadDeadline(until)
	br := bufio.NewReader(conn)
	for {
		_, _, err := wire.ReadReply(br, wire.OpAuth, 1<<16, nil)
		var r wire.Refusal
		switch {
		case errors.As(err, &r) && r.Message == "authentication failed":
			checked++
		case errors.As(err, &r):
			unchecked++
		case err != nil:
			return checked, unchecked, nil
		}
	}
}

func TestGuessingIsSlowedPerAddress(t *testing.T) {
	const secret = "correct horse"
	p := launch(t, "--metrics=127.0.0.1:0", "--requirepass-file="+passwordFile(t, secret))
	start := time.Now()
	until := start.Add(1500 * time.Millisecond)
	var checked, unchecked atomic.Int64
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for time.Now().Before(until) {
				c, u, err := guess("127.0.0.2", p.addr, 50, until.Add(10*time.Second))
				if err != nil {
					t.Error(err)
					return
				}
				checked.Add(int64(c))
				unchecked.Add(int64(u))
			}
		})
	}
	// 20 000 wrong AUTHs then the right one, pipelined on one connection.
	var oneConn int
	wg.Go(func() { oneConn, _, _ = guess("127.0.0.4", p.addr, 20000, start.Add(10*time.Second)) })
	time.Sleep(200 * time.Millisecond)
	politeRounds(t, p, secret, 10, 100*time.Millisecond) // from 127.0.0.1 while the guessing goes on
	wg.Wait()
	// Checks already queued run after the clients left: count the server's, once it is done.
	for p.metric(t, "pace_kv_connections_open") > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(start)
	serverChecked := p.metric(t, "pace_cache_credentials_rejected_total") - float64(oneConn)
	rate := serverChecked / elapsed.Seconds()
	t.Logf("127.0.0.2 over 6 connections for 1.5s: %v guesses checked (%.1f/s over %v), %d answered, %d refused unchecked; one connection of 20 000 pipelined guesses: %d checked",
		serverChecked, rate, elapsed, checked.Load(), unchecked.Load(), oneConn)
	if rate > 100 || checked.Load() == 0 {
		t.Fatalf("%.1f guesses/s from one address, want at most 100", rate)
	}
	if oneConn != 5 {
		t.Fatalf("one connection got %d guesses checked, want 5 before it is closed", oneConn)
	}
	if p.metric(t, "pace_cache_auth_connections_closed_total") == 0 {
		t.Fatal("no connection closed for its failures")
	}
	if lines := p.logged("AUTH"); lines == 0 || lines > 10 {
		t.Fatalf("%d AUTH log lines for %d failures, want 1 to 10", lines, checked.Load())
	}
	if p.logged("remote=127.0.0.2") == 0 || p.logged("guess-") != 0 {
		t.Fatal("failures logged without their source, or with the secret")
	}
}
