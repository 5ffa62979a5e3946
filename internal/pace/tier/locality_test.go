package tier

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// lister is an injected address list the test can change.
type lister struct {
	mu    sync.Mutex
	addrs []netip.Addr
	err   error
	reads int
}

func (l *lister) list() ([]netip.Addr, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	return l.addrs, l.err
}

func (l *lister) set(err error, addrs ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = err
	l.addrs = l.addrs[:0]
	for _, a := range addrs {
		l.addrs = append(l.addrs, netip.MustParseAddr(a))
	}
}

func tcpPeer(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 5000} }

// pace-node §4 "who is served": loopback or one of this host's addresses, nothing
// else.
func TestOnlyThisMachineIsServed(t *testing.T) {
	l := &lister{}
	l.set(nil, "10.1.2.3", "fd00::7", "fe80::1")
	tr := newTier(t, Config{HostAddrs: l.list})
	tests := []struct {
		name  string
		peer  net.Addr
		local bool
	}{
		{"IPv4 loopback", tcpPeer("127.0.0.1"), true},
		{"elsewhere in 127/8", tcpPeer("127.8.9.10"), true},
		{"IPv6 loopback", tcpPeer("::1"), true},
		{"IPv4-mapped loopback", &net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1")}, true},
		{"own IPv4 address", tcpPeer("10.1.2.3"), true},
		{"own IPv6 address", tcpPeer("fd00::7"), true},
		{"own link-local address with a zone", &net.TCPAddr{IP: net.ParseIP("fe80::1"), Zone: "eth0"}, true},
		{"a neighbour on the same subnet", tcpPeer("10.1.2.4"), false},
		{"a remote host", offBoxPeer, false},
		{"no address", nil, false},
		{"a typed nil address", (*net.TCPAddr)(nil), false},
		{"a unix socket peer", &net.UnixAddr{Name: "@x", Net: "unix"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tr.Snapshot().RefusedNotLocal
			r := tr.ServeFrom(bg, tt.peer, fetchReq("k"))
			refused := tr.Snapshot().RefusedNotLocal - before
			if tt.local {
				expectStatus(t, r, wire.StatusMiss)
				if refused != 0 {
					t.Fatal("a local caller was counted as refused")
				}
				return
			}
			expectRefusal(t, r, wire.CodeNotAMember)
			if refused != 1 {
				t.Fatalf("refusal counted %d times", refused)
			}
		})
	}
}

// Every cache verb from off the box is refused, and an off-box STORE stores nothing.
func TestOffBoxRequestsAreRefusedForEveryVerb(t *testing.T) {
	tr := newTier(t, Config{})
	v := compileValue(t, "object")
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("present", "", "", v)), wire.StatusOk)
	for _, req := range []struct {
		name string
		r    func() *frameserver.Request
	}{
		{"FETCH of a present key", func() *frameserver.Request { return fetchReq("present") }},
		{"STORE", func() *frameserver.Request { return storeReq("new", "", "", v) }},
		{"CACHE-DROP", func() *frameserver.Request { return dropReq("present") }},
		{"malformed FETCH", func() *frameserver.Request { return fetchReq("") }},
	} {
		ref := expectRefusal(t, tr.ServeFrom(bg, offBoxPeer, req.r()), wire.CodeNotAMember)
		if ref.Message == "" {
			t.Fatalf("%s: the refusal should say why", req.name)
		}
	}
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("new")), wire.StatusMiss)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("present")), wire.StatusOk)
	if s := tr.Snapshot(); s.RefusedNotLocal != 4 || s.RefusedMalformedPayload != 0 {
		t.Fatalf("counters %+v", s)
	}
}

// The address set is re-read every 30 s (injected clock), not on every request.
func TestHostAddressesAreReReadEveryThirtySeconds(t *testing.T) {
	l := &lister{}
	l.set(nil, "10.0.0.1")
	clock := newFakeClock()
	tr := newTier(t, Config{HostAddrs: l.list, Now: clock.Now})
	served := func(ip string) bool { return tr.ServeFrom(bg, tcpPeer(ip), fetchReq("k")).Status == wire.StatusMiss }

	l.set(nil, "10.0.0.2") // the host moved
	clock.Advance(DefaultAddrRefresh - 1)
	if !served("10.0.0.1") || served("10.0.0.2") {
		t.Fatal("the set changed before the refresh interval")
	}
	clock.Advance(1)
	if served("10.0.0.1") || !served("10.0.0.2") {
		t.Fatal("the set was not re-read after 30 s")
	}
	if l.reads != 2 {
		t.Fatalf("%d reads of the address list, want 2", l.reads)
	}
}

func TestAFailingAddressListKeepsThePreviousSet(t *testing.T) {
	l := &lister{}
	l.set(nil, "10.0.0.1")
	clock := newFakeClock()
	tr := newTier(t, Config{HostAddrs: l.list, Now: clock.Now})
	l.set(errors.New("netlink: permission denied"))
	clock.Advance(DefaultAddrRefresh)
	expectStatus(t, tr.ServeFrom(bg, tcpPeer("10.0.0.1"), fetchReq("k")), wire.StatusMiss)
	expectStatus(t, tr.ServeFrom(bg, tcpPeer("10.0.0.1"), fetchReq("k")), wire.StatusMiss)
	if l.reads != 2 {
		t.Fatalf("%d reads: a failing list must be retried once per interval, not per request", l.reads)
	}
}
