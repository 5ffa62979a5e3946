//go:build linux

package wsconn

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// getsockopt reads an int option from the TCP connection under c.
func getsockopt(t *testing.T, c net.Conn, level, opt int) int {
	t.Helper()
	tcp, ok := c.(*net.TCPConn)
	if !ok {
		t.Fatalf("underlying connection is %T, not *net.TCPConn", c)
	}
	raw, err := tcp.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var getErr error
	if err := raw.Control(func(fd uintptr) { v, getErr = unix.GetsockoptInt(int(fd), level, opt) }); err != nil {
		t.Fatal(err)
	}
	if getErr != nil {
		t.Fatal(getErr)
	}
	return v
}

// gradient-protocol §1.1: a dialed socket has Nagle off, TCP_USER_TIMEOUT at 120 s and
// keepalive on; an accepted one has Nagle off.
func TestSocketOptions(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	worker := dialServer(t, url, DialOptions{})
	server := acceptOne(t, accepted)

	dialed := worker.s.bc.Conn
	for _, tc := range []struct {
		name       string
		level, opt int
		want       int
	}{
		{"TCP_NODELAY", unix.IPPROTO_TCP, unix.TCP_NODELAY, 1},
		{"TCP_USER_TIMEOUT", unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(TCPUserTimeout.Milliseconds())},
		{"SO_KEEPALIVE", unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
	} {
		if got := getsockopt(t, dialed, tc.level, tc.opt); got != tc.want {
			t.Errorf("dialed socket %s = %d, want %d", tc.name, got, tc.want)
		}
	}
	if server.s.bc == nil {
		t.Fatal("accepted connection did not go through the batching conn")
	}
	if got := getsockopt(t, server.s.bc.Conn, unix.IPPROTO_TCP, unix.TCP_NODELAY); got != 1 {
		t.Errorf("accepted socket TCP_NODELAY = %d, want 1", got)
	}
}
