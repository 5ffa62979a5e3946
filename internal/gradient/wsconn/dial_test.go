package wsconn

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// gradient-protocol §1.1: the worker gives up on a connect that gets no answer (here a
// listener that accepts TCP but never answers the upgrade) after the connect timeout.
func TestDialGivesUpOnASilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	_, err = DialServer(testCtx(t), "ws://"+ln.Addr().String()+"/proto",
		DialOptions{ConnectTimeout: 100 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("DialServer to a silent server = %v, want context.DeadlineExceeded", err)
	}
}

// The dial context only bounds the dial: the connection outlives it.
func TestConnOutlivesTheDialContext(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	dialCtx, cancel := context.WithCancel(testCtx(t))
	worker, err := DialServer(dialCtx, url, DialOptions{})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(worker.Abort)
	server := acceptOne(t, accepted)
	agreeBoth(t, worker, server)
}

func TestHandshakeContextHasTheHandshakeDeadline(t *testing.T) {
	before := time.Now()
	ctx, cancel := HandshakeContext(context.Background())
	defer cancel()
	deadline, ok := ctx.Deadline()
	if !ok || deadline.Before(before.Add(HandshakeTimeout)) || deadline.After(time.Now().Add(HandshakeTimeout)) {
		t.Fatalf("deadline %v (set %v), want %v from now", deadline, ok, HandshakeTimeout)
	}
}
