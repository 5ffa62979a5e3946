package sealedconn

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// A scheduler that accepts and never answers (an old build, not a node
// port) does not hold the dialler: the proof ends with the context.
func TestSilentSchedulerEndsWithTheContext(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	s := startScheduler(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Dial(ctx, l.Addr().String(), s.config("n2", nodeKey)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("silent scheduler: %v", err)
	}
}

// A request whose context is already cancelled is not sent, and the
// connection stays usable.
func TestCancelledRequests(t *testing.T) {
	s := startScheduler(t)
	c := dial(t, s.addr, s.config("n2", nodeKey))
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := c.Do(done, wire.OpFetch, []byte("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before sending: %v", err)
	}
	if _, payload, err := c.Do(testContext(t), wire.OpFetch, []byte("still")); err != nil || string(payload) != "still" {
		t.Fatalf("after a request that was never sent: %v %q", err, payload)
	}
}

func TestDialRequiresAProver(t *testing.T) {
	s := startScheduler(t)
	if _, err := Dial(testContext(t), s.addr, Config{}); err == nil {
		t.Fatal("dialled without an identity")
	}
}
