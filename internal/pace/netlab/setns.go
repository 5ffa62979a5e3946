package netlab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// DialContext connects from inside the host, from this process: a test can talk to a server in
// the lab as one of its machines would (an http.Transport's DialContext, say). The socket is
// made in the host's namespace and stays there, whichever thread uses it later. address must
// be an IP and a port: a name would be resolved on other threads, outside the namespace.
func (h *Host) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if err := literal(address); err != nil {
		return nil, err
	}
	var c net.Conn
	err := h.inside(func() (err error) {
		c, err = (&net.Dialer{}).DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// Listen listens inside the host, from this process; address as for DialContext.
func (h *Host) Listen(network, address string) (net.Listener, error) {
	if err := literal(address); err != nil {
		return nil, err
	}
	var l net.Listener
	err := h.inside(func() (err error) {
		l, err = net.Listen(network, address)
		return err
	})
	return l, err
}

// ListenPacket opens a datagram socket inside the host, from this process; address as for
// DialContext. Go's UDP sockets may send to a broadcast address.
func (h *Host) ListenPacket(network, address string) (net.PacketConn, error) {
	if err := literal(address); err != nil {
		return nil, err
	}
	var c net.PacketConn
	err := h.inside(func() (err error) {
		c, err = net.ListenPacket(network, address)
		return err
	})
	return c, err
}

// literal refuses an address whose host is not an IP (an empty host, meaning every address, is
// fine).
func literal(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if _, err := netip.ParseAddr(host); host != "" && err != nil {
		return fmt.Errorf("%q: netlab dials and listens on IP addresses only", address)
	}
	return nil
}

// inside runs fn on an OS thread switched into the host's namespace, on a goroutine of its own.
// The thread goes back to its own namespace afterwards; if it cannot, the goroutine ends still
// locked to it, and the runtime then ends the thread instead of reusing it in the wrong
// namespace. Threads the runtime starts meanwhile are cloned from a clean template thread, not
// from this one.
func (h *Host) inside(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		back, err := enter(netnsDir + "/" + h.ns)
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("entering %s: %w", h.ns, err)
			return
		}
		ferr := fn()
		if err := back(); err != nil {
			done <- errors.Join(ferr, fmt.Errorf("leaving %s: %w", h.ns, err))
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}

// enter switches the calling thread into the network namespace at path and returns the switch
// back.
func enter(path string) (back func() error, err error) {
	own, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		return nil, err
	}
	target, err := os.Open(path)
	if err != nil {
		own.Close()
		return nil, err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		own.Close()
		return nil, err
	}
	return func() error {
		defer own.Close()
		return unix.Setns(int(own.Fd()), unix.CLONE_NEWNET)
	}, nil
}
