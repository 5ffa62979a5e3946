package frameserver

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Reading n bytes never holds more than n plus an eighth (or growStart for
// small n) at once, and never allocates more than sixteen times what has
// arrived.
func TestGrowthScheduleBoundsThePeak(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(largePayload+1, 1<<31).Draw(t, "n")
		c := min(n, growStart)
		for c < n {
			next := nextCap(c, n)
			if next <= c || next > n {
				t.Fatalf("nextCap(%d, %d) = %d", c, n, next)
			}
			if c+next > n+max(n/8, growStart) {
				t.Fatalf("peak %d reading %d", c+next, n)
			}
			if next > 16*c {
				t.Fatalf("allocated %d after %d arrived", next, c)
			}
			c = next
		}
	})
}

func TestPayloadAllowanceIsFixedPlusTheFloorRate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.Uint32().Draw(t, "a")
		b := rapid.Uint32Min(a).Draw(t, "b")
		rate := rapid.IntRange(1, 1<<30).Draw(t, "rate")
		fixed := time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "fixed"))
		la, lb := payloadAllowance(a, fixed, rate), payloadAllowance(b, fixed, rate)
		if la < fixed || lb < la {
			t.Fatalf("allowance not monotone: %v for %d, %v for %d", la, a, lb, b)
		}
		// The floor rate holds: the allowance beyond the fixed part never lets a byte in slower.
		if secs := (lb - fixed).Seconds(); float64(b) > float64(rate)*secs+float64(rate)*1e-9+1 {
			t.Fatalf("%d bytes in %v is slower than %d B/s", b, lb-fixed, rate)
		}
	})
}

func TestSourceKey(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want netip.Addr
	}{
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 1}, netip.MustParseAddr("192.0.2.7")},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.7"), Port: 1}, netip.MustParseAddr("192.0.2.7")},
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, netip.MustParseAddr("127.0.0.2")},
		// One IPv6 host usually holds a whole /64: it counts as one address.
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa::1")}, netip.MustParseAddr("2001:db8:1:2::")},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:bbbb::9")}, netip.MustParseAddr("2001:db8:1:2::")},
		{&net.TCPAddr{IP: net.ParseIP("::1")}, netip.MustParseAddr("::")},
		{&net.UnixAddr{Name: "/tmp/s", Net: "unix"}, netip.Addr{}},
		{&net.TCPAddr{}, netip.Addr{}},
	}
	for _, tt := range tests {
		if got := sourceKey(tt.addr); got != tt.want {
			t.Errorf("sourceKey(%v) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}
