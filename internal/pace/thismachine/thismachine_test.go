package thismachine

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Property: for any listed set and any peer, the peer is served exactly when it is loopback
// or listed (IPv4-mapped forms included).
func TestLocalityProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		gen := rapid.Custom(func(rt *rapid.T) netip.Addr {
			if rapid.Bool().Draw(rt, "v6") {
				return netip.AddrFrom16([16]byte(rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(rt, "b16")))
			}
			return netip.AddrFrom4([4]byte(rapid.SliceOfN(rapid.Byte(), 4, 4).Draw(rt, "b4")))
		})
		listed := rapid.SliceOfN(gen, 0, 6).Draw(rt, "listed")
		peer := gen.Draw(rt, "peer")
		if rapid.Bool().Draw(rt, "pick listed") && len(listed) > 0 {
			peer = listed[rapid.IntRange(0, len(listed)-1).Draw(rt, "i")]
		}
		h := New(func() ([]netip.Addr, error) { return listed, nil }, time.Now, time.Minute, nil)
		want := peer.Unmap().IsLoopback()
		for _, a := range listed {
			want = want || a.Unmap() == peer.Unmap()
		}
		if got := h.Contains(peer); got != want {
			rt.Fatalf("Contains(%s) = %v with %v listed", peer, got, listed)
		}
		mapped := netip.AddrFrom16(peer.Unmap().As16())
		if peer.Unmap().Is4() && h.Contains(mapped) != want {
			rt.Fatalf("the IPv4-mapped form of %s is judged differently", peer)
		}
	})
}

func TestIsPeer(t *testing.T) {
	h := New(func() ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil }, time.Now, time.Minute, nil)
	for addr, want := range map[string]bool{"127.0.0.1": true, "::1": true, "10.0.0.1": true, "10.0.0.2": false} {
		if got := h.IsPeer(&net.TCPAddr{IP: net.ParseIP(addr), Port: 1}); got != want {
			t.Errorf("IsPeer(%s) = %v", addr, got)
		}
	}
	if h.IsPeer(nil) {
		t.Error("a connection without an address is this machine")
	}
}
