package frameserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func TestIdleTimeoutClosesConnection(t *testing.T) {
	obs := newCountingObserver()
	_, addr := startServer(t, Config{Observer: obs, IdleTimeout: 50 * time.Millisecond})
	c := dial(t, addr)
	c.send(fetch("k"))
	c.expectOk(wire.OpFetch, "k")
	c.expectClosed()
	if r := obs.waitClosed(t); r != ClosedIdle {
		t.Fatalf("closed for %s, want idle", r)
	}
}

func TestStalledPeerIsClosed(t *testing.T) {
	tests := []struct {
		name    string
		partial []byte
	}{
		{"mid-header", []byte{0xFC, 1, 0x02}},
		{"mid-payload", rawFrame(1, wire.OpStore, 100, make([]byte, 10))},
		{"mid-drain", rawFrame(1, 0x99, 100, make([]byte, 10))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := newCountingObserver()
			// A long idle timeout: only the frame timeout can end this.
			_, addr := startServer(t, Config{Observer: obs, IdleTimeout: time.Hour, FrameTimeout: 50 * time.Millisecond})
			c := dial(t, addr)
			c.send(tt.partial)
			if tt.name == "mid-drain" {
				c.expectRefusal(wire.OpFetch, wire.CodeUnknownOpcode)
			}
			c.expectClosed()
			if r := obs.waitClosed(t); r != ClosedStalled {
				t.Fatalf("closed for %s, want stalled", r)
			}
		})
	}
}

func TestConnectionCap(t *testing.T) {
	obs := newCountingObserver()
	srv, addr := startServer(t, Config{Observer: obs, MaxConns: 2})
	a, b := dial(t, addr), dial(t, addr)
	for _, c := range []*client{a, b} {
		c.send(fetch("held"))
		c.expectOk(wire.OpFetch, "held")
	}
	third := dial(t, addr)
	third.expectClosed()
	if srv.ActiveConns() != 2 {
		t.Fatalf("%d connections open, want 2", srv.ActiveConns())
	}
	obs.mu.Lock()
	rejected, accepted := obs.rejected[RejectedAtCapacity], obs.accepted
	obs.mu.Unlock()
	if rejected != 1 || accepted != 2 {
		t.Fatalf("accepted %d rejected %d, want 2 and 1", accepted, rejected)
	}
	// Closing one makes room again.
	a.conn.Close()
	obs.waitClosed(t)
	d := dial(t, addr)
	d.send(fetch("room"))
	d.expectOk(wire.OpFetch, "room")
}

func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	h := &testHandler{release: make(chan struct{}), entered: make(chan struct{}, 1)}
	obs := newCountingObserver()
	srv, addr := startServer(t, Config{Handler: h, Observer: obs})
	idle := dial(t, addr)
	idle.send(fetch("warm"))
	idle.expectOk(wire.OpFetch, "warm")
	busy := dial(t, addr)
	busy.send(fetch("slow"))
	<-h.entered

	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(context.Background()) }()
	idle.expectClosed() // idle connections close at once
	if r := obs.waitClosed(t); r != ClosedShutdown {
		t.Fatalf("idle connection closed for %s", r)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Fatal("a shut-down server still accepts")
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	default:
	}
	close(h.release)
	busy.expectOk(wire.OpFetch, "slow done")
	busy.expectClosed()
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestShutdownDeadlineCancelsHandlers(t *testing.T) {
	h := &testHandler{release: make(chan struct{}), entered: make(chan struct{}, 1)}
	srv, addr := startServer(t, Config{Handler: h})
	busy := dial(t, addr)
	busy.send(fetch("slow"))
	<-h.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown with an expired context: %v", err)
	}
	busy.expectClosed()
}

func TestSixtyFourConcurrentClients(t *testing.T) {
	_, addr := startServer(t, Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- runClient(addr, i, 200)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// runClient does n request/reply exchanges with distinct keys and checks
// each reply answers its own request.
func runClient(addr string, id, n int) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(clientTimeout))
	for j := range n {
		key := fmt.Sprintf("client-%d-req-%d", id, j)
		if j%10 == 0 {
			key = fmt.Sprintf("big:%d", 70000+id)
		}
		if _, err := conn.Write(fetch(key)); err != nil {
			return err
		}
		status, payload, err := wire.ReadReply(conn, wire.OpFetch, 1<<20, nil)
		if err != nil || status != wire.StatusOk {
			return fmt.Errorf("client %d request %d: %s %v", id, j, status, err)
		}
		if j%10 != 0 && string(payload) != key || j%10 == 0 && len(payload) != 70000+id {
			return fmt.Errorf("client %d request %d: reply for another request", id, j)
		}
	}
	return nil
}

func TestShutdownDoesNotWaitForAnUnfinishedHeader(t *testing.T) {
	obs := newCountingObserver()
	srv, addr := startServer(t, Config{Observer: obs, FrameTimeout: time.Hour})
	c := dial(t, addr)
	c.send([]byte{wire.Magic, 1, byte(wire.OpFetch)})
	waitFor(t, func() bool { return srv.ActiveConns() == 1 })
	time.Sleep(20 * time.Millisecond) // the server is inside the header
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown waited for a header that never came: %v", err)
	}
	if r := obs.waitClosed(t); r != ClosedShutdown {
		t.Fatalf("closed for %s, want shutdown", r)
	}
}
