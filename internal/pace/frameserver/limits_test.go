package frameserver

import (
	"bytes"
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// dialFrom dials addr from a loopback source address such as 127.0.0.2,
// so one test can be several peers to the per-address cap.
func dialFrom(t testing.TB, src, addr string) *client {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn, br: bufioReader(conn)}
}

// trickle writes b one byte every gap until it is all sent or the peer is gone.
func trickle(conn net.Conn, b []byte, gap time.Duration) {
	for i := range b {
		if _, err := conn.Write(b[i : i+1]); err != nil {
			return
		}
		time.Sleep(gap)
	}
}

func TestTricklingPeerIsCutAtTheWholeFrameDeadline(t *testing.T) {
	tests := []struct {
		name  string
		frame []byte
		limit time.Duration // the frame's deadline: FrameTimeout, plus payload at the floor rate
	}{
		// A header has FrameTimeout from its first byte: 7 bytes 40 ms apart take 240 ms.
		{"header", rawFrame(1, wire.OpFetch, 5, []byte{0, 0, 0, 1, 'k'}), 150 * time.Millisecond},
		// 2000 payload bytes at 20 000 B/s is 100 ms on top of FrameTimeout.
		{"payload", rawFrame(1, wire.OpStore, 2000, make([]byte, 2000)), 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := newCountingObserver()
			// Every byte arrives well within FrameTimeout: only the whole-frame deadline can end this.
			_, addr := startServer(t, Config{Observer: obs, IdleTimeout: time.Hour,
				FrameTimeout: 150 * time.Millisecond, MinFrameRate: 20000})
			c := dial(t, addr)
			if tt.name == "payload" {
				c.send(tt.frame[:wire.RequestHeaderLen])
				tt.frame = tt.frame[wire.RequestHeaderLen:]
			}
			start := time.Now()
			go trickle(c.conn, tt.frame, 40*time.Millisecond)
			if r := obs.waitClosed(t); r != ClosedStalled {
				t.Fatalf("closed for %s, want stalled", r)
			}
			if took := time.Since(start); took < tt.limit || took > tt.limit+time.Second {
				t.Fatalf("cut after %v, want just after %v", took, tt.limit)
			}
		})
	}
}

func TestPayloadAllowanceOfTheProductionDefaults(t *testing.T) {
	tests := []struct {
		n    uint32
		want time.Duration
	}{
		{0, 10 * time.Second},
		{64 << 10, 11 * time.Second},
		{wire.DefaultSessionCap, 10*time.Second + 4096*time.Second},
		{^uint32(0), 10*time.Second + time.Duration(uint64(^uint32(0))*uint64(time.Second)/(64<<10))},
	}
	for _, tt := range tests {
		if got := payloadAllowance(tt.n, DefaultFrameTimeout, DefaultMinFrameRate); got != tt.want {
			t.Errorf("payloadAllowance(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
}

func TestAuthDeadlineClosesOnlyUnauthenticatedConnections(t *testing.T) {
	obs := newCountingObserver()
	_, addr := startServer(t, Config{Observer: obs, IdleTimeout: time.Hour, AuthTimeout: 100 * time.Millisecond,
		CredentialRequired: func() bool { return true }})
	anon, authed := dial(t, addr), dial(t, addr)
	authed.send(auth("sesame"))
	authed.expectOk(wire.OpAuth, "")
	anon.expectClosed()
	if r := obs.waitClosed(t); r != ClosedAuthTimeout {
		t.Fatalf("closed for %s, want auth_timeout", r)
	}
	time.Sleep(100 * time.Millisecond) // past the pre-auth deadline of authed too
	authed.send(fetch("still"))
	authed.expectOk(wire.OpFetch, "still")
}

func TestPerAddressCap(t *testing.T) {
	obs := newCountingObserver()
	_, addr := startServer(t, Config{Observer: obs, MaxConnsPerAddr: 2})
	for range 2 {
		c := dialFrom(t, "127.0.0.2", addr)
		c.send(fetch("held"))
		c.expectOk(wire.OpFetch, "held")
	}
	dialFrom(t, "127.0.0.2", addr).expectClosed()
	other := dialFrom(t, "127.0.0.3", addr)
	other.send(fetch("other address"))
	other.expectOk(wire.OpFetch, "other address")
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.rejected[RejectedPerAddress] != 1 || obs.rejected[RejectedAtCapacity] != 0 {
		t.Fatalf("rejections %v, want one per_address", obs.rejected)
	}
}

func TestNewcomerDisplacesTheLongestIdleConnectionOfTheBusiestAddress(t *testing.T) {
	obs := newCountingObserver()
	srv, addr := startServer(t, Config{Observer: obs, MaxConns: 4, MaxConnsPerAddr: -1, IdleTimeout: time.Hour})
	srv.mu.Lock()
	srv.displaceAfter = 20 * time.Millisecond
	srv.mu.Unlock()
	var hogs []*client
	for range 3 {
		c := dialFrom(t, "127.0.0.2", addr)
		c.send(fetch("hog"))
		c.expectOk(wire.OpFetch, "hog")
		hogs = append(hogs, c)
	}
	mid := dialFrom(t, "127.0.0.3", addr)
	mid.send([]byte{wire.Magic, 1}) // stuck inside a header
	time.Sleep(50 * time.Millisecond)

	// The server is full: a newcomer from 127.0.0.4 displaces the oldest idle hog.
	polite := dialFrom(t, "127.0.0.4", addr)
	polite.send(fetch("served"))
	polite.expectOk(wire.OpFetch, "served")
	if r := obs.waitClosed(t); r != ClosedDisplaced {
		t.Fatalf("closed for %s, want displaced", r)
	}
	hogs[0].expectClosed()
	for _, h := range hogs[1:] {
		h.send(fetch("kept"))
		h.expectOk(wire.OpFetch, "kept")
	}
	// 127.0.0.2 now holds 2, as many as anyone after admission: another hog is refused.
	dialFrom(t, "127.0.0.2", addr).expectClosed()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.rejected[RejectedAtCapacity] != 1 {
		t.Fatalf("rejections %v, want one at_capacity", obs.rejected)
	}
}

func TestBusyConnectionsAreNeverDisplaced(t *testing.T) {
	h := &testHandler{release: make(chan struct{}), entered: make(chan struct{}, 1)}
	obs := newCountingObserver()
	srv, addr := startServer(t, Config{Handler: h, Observer: obs, MaxConns: 1, MaxConnsPerAddr: -1})
	srv.mu.Lock()
	srv.displaceAfter = 0
	srv.mu.Unlock()
	busy := dialFrom(t, "127.0.0.2", addr)
	busy.send(fetch("slow"))
	<-h.entered
	time.Sleep(10 * time.Millisecond)
	dialFrom(t, "127.0.0.3", addr).expectClosed()
	close(h.release)
	busy.expectOk(wire.OpFetch, "slow done")
}

func TestPayloadBudgetRefusesBeforeReading(t *testing.T) {
	obs := newCountingObserver()
	srv, addr := startServer(t, Config{Observer: obs, PayloadBudget: 1 << 20, BudgetWait: 50 * time.Millisecond})
	const n = 800 << 10
	payload := wire.AppendRequest(nil, wire.OpStore, []byte("k"), nil, nil, nil, bytes.Repeat([]byte{7}, n))
	holder := dial(t, addr)
	holder.send(payload[:len(payload)/2]) // holds 800 KiB of the 1 MiB budget while it sends
	waitFor(t, func() bool { return srv.InflightPayload() > 0 })

	other := dial(t, addr)
	other.send(payload, fetch("small frames are never charged"))
	r := other.expectRefusal(wire.OpStore, wire.CodeEndpointBusy)
	if !r.Code.Retriable() {
		t.Fatalf("endpoint-busy is not retriable: %v", r)
	}
	other.expectOk(wire.OpFetch, "small frames are never charged")

	holder.send(payload[len(payload)/2:])
	holder.expectOk(wire.OpStore, "")
	waitFor(t, func() bool { return srv.InflightPayload() == 0 })
	other.send(payload)
	other.expectOk(wire.OpStore, "")

	whole := wire.AppendRequest(nil, wire.OpStore, []byte("k"), nil, nil, nil, make([]byte, 2<<20))
	other.send(whole, fetch("after"))
	other.expectRefusal(wire.OpStore, wire.CodePayloadTooLarge)
	other.expectOk(wire.OpFetch, "after")
	if got := obs.refusals(RefusedEndpointBusy); got != 1 {
		t.Fatalf("endpoint_busy counted %d times", got)
	}
}

func TestBudgetWaiterGetsRoomReleasedWithinItsWait(t *testing.T) {
	b := newPayloadBudget(100, time.Minute, func() {})
	if _, ok := b.admit(context.Background(), 80); !ok {
		t.Fatal("first charge refused")
	}
	got := make(chan bool, 1)
	go func() { _, ok := b.admit(context.Background(), 50); got <- ok }()
	time.Sleep(10 * time.Millisecond)
	b.release(80)
	if !<-got {
		t.Fatal("waiter refused although room was released")
	}
	if b.inUse() != 50 {
		t.Fatalf("in use %d, want 50", b.inUse())
	}
	if r, ok := b.admit(context.Background(), 101); ok || r.Code != wire.CodePayloadTooLarge {
		t.Fatalf("a frame above the whole budget: %v %v", r, ok)
	}
	noWait := newPayloadBudget(10, -1, func() {})
	noWait.admit(context.Background(), 10)
	if r, ok := noWait.admit(context.Background(), 1); ok || r.Code != wire.CodeEndpointBusy {
		t.Fatalf("full budget without a wait: %v %v", r, ok)
	}
}

func TestMemoryIsReturnedOnceABurstIsOver(t *testing.T) {
	var freed atomic.Int32
	done := make(chan struct{}, 4)
	b := newPayloadBudget(1<<30, 0, func() { freed.Add(1); done <- struct{}{} })
	b.admit(context.Background(), returnAfter/2)
	b.admit(context.Background(), returnAfter/2)
	b.release(returnAfter / 2)
	if freed.Load() != 0 {
		t.Fatal("memory returned while the burst still holds the budget")
	}
	b.release(returnAfter / 2)
	select {
	case <-done:
	case <-time.After(clientTimeout):
		t.Fatal("memory never returned after the burst")
	}
	b.admit(context.Background(), 1<<20) // a small frame is no burst
	b.release(1 << 20)
	time.Sleep(20 * time.Millisecond)
	if freed.Load() != 1 {
		t.Fatalf("memory returned %d times, want once", freed.Load())
	}
}

// waitFor polls cond until it holds (bounded by clientTimeout).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(clientTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestReleasedPayloadsAreCollectedWhenTheNextFrameWouldPassTheLimit(t *testing.T) {
	b := newPayloadBudget(1<<30, 0, func() {})
	var collections int
	resident := int64(100 << 20)
	b.collect = func() { collections++; resident = 10 << 20 }
	b.resident = func() int64 { return resident }
	b.memLimit = func() int64 { return 200 << 20 }
	b.admit(context.Background(), 150<<20) // nothing released yet: nothing to collect
	b.release(150 << 20)
	b.admit(context.Background(), 50<<20) // fits under the limit beside what is resident
	b.release(50 << 20)
	if collections != 0 {
		t.Fatalf("%d collections while everything fitted", collections)
	}
	b.admit(context.Background(), 150<<20) // 100 + 150 would pass 200
	b.release(150 << 20)
	if collections != 1 {
		t.Fatalf("%d collections, want one before the frame that would pass the limit", collections)
	}
	if goMemLimit() <= 0 || goResident() <= 0 {
		t.Fatalf("runtime figures: limit %d, resident %d", goMemLimit(), goResident())
	}
}
