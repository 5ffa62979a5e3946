package netlab

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// Dial connects to addr from inside the host, as a program running there would: the socket is
// made on a thread that joined the host's network namespace, and a socket keeps the namespace
// it was made in. The thread then returns to this process's namespace before anything else
// may run on it; if it cannot, it stays locked and exits with its goroutine.
func (h *Host) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("netlab: this thread's namespace: %w", err)}
			return
		}
		defer home.Close()
		c, err := h.dialFrom(ctx, network, addr)
		if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- result{c, err}
	}()
	r := <-done
	return r.c, r.err
}

// dialFrom joins the host's namespace on this (locked) thread and dials.
func (h *Host) dialFrom(ctx context.Context, network, addr string) (net.Conn, error) {
	ns, err := os.Open(filepath.Join("/run/netns", h.ns))
	if err != nil {
		return nil, fmt.Errorf("netlab: %s: %w", h.name, err)
	}
	defer ns.Close()
	if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("netlab: joining %s: %w", h.name, err)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
