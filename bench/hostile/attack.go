package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// mix is how many attacker connections of each kind run at once. Each kind redials after the
// server ends its connection (after a 100 ms pause, so the churn stays bounded too).
type mix struct{ slow, idle, half, guessers, big int }

// attack is the hostile mix running against one daemon.
type attack struct {
	wg sync.WaitGroup
	// What the attackers saw: connections opened, ended by the server, dials that failed, and
	// replies to their frames by outcome.
	dials, ended, dialErrs, replies, refused atomic.Int64
}

const (
	halfDeclared = 64 << 20
	bigPayload   = 200<<20 - 1
	redialPause  = 100 * time.Millisecond
)

var bigZeros = make([]byte, bigPayload)

// startAttack launches every attacker of c.mix from c.sources loopback addresses until ctx ends.
func startAttack(ctx context.Context, d *daemon, c config) *attack {
	a := &attack{}
	kinds := []struct {
		n    int
		body func(net.Conn, *daemon)
	}{
		{c.mix.slow, a.trickle}, {c.mix.idle, a.hold}, {c.mix.half, a.halfStore},
		{c.mix.guessers, a.guess}, {c.mix.big, a.bigStore},
	}
	i := 0
	for _, k := range kinds {
		for range k.n {
			src := fmt.Sprintf("127.0.0.%d", 2+i%max(1, c.sources))
			i++
			a.wg.Add(1)
			go a.loop(ctx, src, d, k.body)
		}
	}
	return a
}

// loop runs body on fresh connections from src until ctx ends; ctx's end closes the one open.
func (a *attack) loop(ctx context.Context, src string, d *daemon, body func(net.Conn, *daemon)) {
	defer a.wg.Done()
	dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	for ctx.Err() == nil {
		conn, err := dialer.DialContext(ctx, "tcp", d.addr)
		if err != nil {
			a.dialErrs.Add(1)
		} else {
			a.dials.Add(1)
			stop := context.AfterFunc(ctx, func() { conn.Close() })
			body(conn, d)
			if stop() {
				a.ended.Add(1) // the server ended it, not the end of the phase
			}
			conn.Close()
		}
		select {
		case <-ctx.Done():
		case <-time.After(redialPause):
		}
	}
}

func (a *attack) wait() { a.wg.Wait() }

func (a *attack) summary() string {
	return fmt.Sprintf("attacker_dials=%d attacker_conns_ended_by_server=%d attacker_dial_errors=%d attacker_replies=%d attacker_refusals=%d",
		a.dials.Load(), a.ended.Load(), a.dialErrs.Load(), a.replies.Load(), a.refused.Load())
}

// trickle sends a FETCH of a 1 KiB key one byte a second: slower than any deadline allows.
func (a *attack) trickle(conn net.Conn, _ *daemon) {
	go func() {
		for _, b := range wire.AppendRequest(nil, wire.OpFetch, make([]byte, 1024)) {
			if _, err := conn.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(time.Second)
		}
	}()
	a.drain(conn, wire.OpFetch)
}

// hold sends nothing and waits to be closed.
func (a *attack) hold(conn net.Conn, _ *daemon) { io.Copy(io.Discard, conn) }

// halfStore declares a 64 MiB STORE, sends half of it and stops. Like bigStore it knows the
// password: the abuse of a client the cache trusts, which the budget has to bound.
func (a *attack) halfStore(conn net.Conn, d *daemon) {
	hdr := storeHeader(d, halfDeclared)
	go func() {
		bufs := net.Buffers{hdr, bigZeros[:halfDeclared/2]}
		bufs.WriteTo(conn)
	}()
	a.drain(conn, wire.OpStore)
}

// storeHeader is an AUTH with the daemon's password (when it has one), then the header of a
// STORE of n bytes.
func storeHeader(d *daemon, n uint32) []byte {
	var b []byte
	if d.password != "" {
		b = wire.AppendRequest(b, wire.OpAuth, []byte{1}, nil, []byte(d.password))
	}
	return wire.AppendRequestHeader(b, wire.RequestHeader{Magic: wire.Magic, Version: wire.Version, Op: wire.OpStore, PayloadLen: n})
}

// guess pipelines 50 wrong AUTHs: passwords at pace-kv, machine tickets at a node.
func (a *attack) guess(conn net.Conn, d *daemon) {
	kind, user := byte(1), []byte(nil)
	if d.target == "node" {
		kind = 2
	}
	var frames []byte
	for i := range 50 {
		frames = wire.AppendRequest(frames, wire.OpAuth, []byte{kind}, user, fmt.Appendf(nil, "guess-%d", i))
	}
	go conn.Write(frames)
	a.drain(conn, wire.OpAuth)
}

// bigStore sends 200 MiB STOREs back to back on one connection (after an AUTH with the
// password, see halfStore).
func (a *attack) bigStore(conn net.Conn, d *daemon) {
	first := storeHeader(d, bigPayload)
	next := first[len(first)-wire.RequestHeaderLen:]
	br := bufio.NewReader(conn)
	for hdr := first; ; hdr = next {
		bufs := net.Buffers{hdr, bigZeros}
		if _, err := bufs.WriteTo(conn); err != nil {
			return
		}
		if len(hdr) > wire.RequestHeaderLen && !a.reply(br, wire.OpAuth) {
			return
		}
		if !a.reply(br, wire.OpStore) {
			return
		}
	}
}

// drain reads replies to op until the connection ends.
func (a *attack) drain(conn net.Conn, op wire.Op) {
	br := bufio.NewReader(conn)
	for a.reply(br, op) {
	}
}

// reply reads one reply and counts it; false when the connection ended.
func (a *attack) reply(br *bufio.Reader, op wire.Op) bool {
	_, _, err := wire.ReadReply(br, op, 1<<20, nil)
	var r wire.Refusal
	switch {
	case err == nil:
		a.replies.Add(1)
	case errors.As(err, &r):
		a.replies.Add(1)
		a.refused.Add(1)
	default:
		return false
	}
	return true
}
