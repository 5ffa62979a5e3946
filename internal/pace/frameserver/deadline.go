package frameserver

import (
	"net"
	"net/netip"
	"time"
)

// DefaultMinFrameRate is the floor rate of a payload: after its header, a
// frame's payload must arrive at least this fast, on top of the fixed
// FrameTimeout allowance.
const DefaultMinFrameRate = 64 << 10

// payloadAllowance is how long n payload bytes (and a seal tag) may take
// once the header is in: the fixed allowance plus n at the floor rate. A
// frame is judged as a whole, so a peer that sends one byte a second cannot
// hold its connection by never quite stalling.
func payloadAllowance(n uint32, fixed time.Duration, rate int) time.Duration {
	return fixed + time.Duration(uint64(n)*uint64(time.Second)/uint64(rate))
}

// readDeadline is one absolute read deadline and what missing it means.
type readDeadline struct {
	at     time.Time
	reason CloseReason
}

// earliest is the sooner of d and the pre-auth deadline (when one applies).
func earliest(d readDeadline, authBy time.Time) readDeadline {
	if !authBy.IsZero() && authBy.Before(d.at) {
		return readDeadline{at: authBy, reason: ClosedAuthTimeout}
	}
	return d
}

// sourceKey is what the per-address cap counts a peer under: its IPv4
// address, or the /64 of an IPv6 one (one host usually holds a whole /64).
// Peers that are not IP (pipes, unix sockets) get the zero Addr and no cap.
func sourceKey(a net.Addr) netip.Addr {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return netip.Addr{}
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.Addr()
	}
	return ip
}
