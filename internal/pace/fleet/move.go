package fleet

import (
	"net"
	"net/netip"
	"strings"
)

// Moved is the Announce that records what member m now says of itself: that its 0xFC endpoint
// is node, in the statement numbered seq (pace-consensus §7.4). ok is false when there is
// nothing to record:
//
//   - seq is not above the sequence recorded for m, so an older (or repeated) statement never
//     undoes a newer one, whatever order statements arrive in;
//   - node is not an endpoint, or names a host no other machine could dial: a wildcard, or
//     loopback for a member recorded elsewhere (a machine that routes nowhere for a moment
//     must not take its record with it).
//
// A newer statement of the endpoints on record is still recorded, for its sequence: a member
// numbers each address it finds itself at, not each time it says so, so this happens once per
// move, and it keeps a late statement of an address in between from undoing a move back.
//
// A voter's consensus endpoint moves with it — to node's host, on the port recorded — when its
// recorded consensus and node endpoints share a host: both were derived from one address, the
// one that moved. Endpoints pinned apart (--raft-self and --advertise naming different hosts)
// leave the consensus endpoint alone, and so does a member whose node endpoint was never
// recorded: there is nothing to compare. A learner opens no consensus port, so only its node
// endpoint moves. The scheduler endpoint a member announced while it led moves too when it was
// its node endpoint.
func Moved(m Member, node string, seq uint64) (a Announce, ok bool) {
	if seq <= m.AnnounceSeq || CheckEndpoint(node) != nil {
		return Announce{}, false
	}
	host, _, _ := net.SplitHostPort(node)
	if !dialableFrom(host, hostOf(m.NodeEndpoint)) {
		return Announce{}, false
	}
	a = Announce{ID: m.ID, Seq: seq, NodeEndpoint: node}
	if m.SchedulerEndpoint != "" && m.SchedulerEndpoint == m.NodeEndpoint {
		a.SchedulerEndpoint = node
	}
	if m.Seat == Voter && m.NodeEndpoint != "" && sameHost(hostOf(m.RaftEndpoint), hostOf(m.NodeEndpoint)) {
		_, port, _ := net.SplitHostPort(m.RaftEndpoint)
		a.RaftEndpoint = net.JoinHostPort(host, port)
	}
	return a, true
}

// dialableFrom reports whether host is one other machines could dial, given the host the
// member is recorded at: never a wildcard, and loopback only for a member recorded on loopback
// (every member of a fleet on one machine is).
func dialableFrom(host, recorded string) bool {
	switch {
	case isUnspecified(host):
		return false
	case isLoopback(host):
		return isLoopback(recorded)
	}
	return true
}

// hostOf is the host of an endpoint, "" when it is not host:port.
func hostOf(endpoint string) string {
	host, _, err := net.SplitHostPort(endpoint)
	if err != nil {
		return ""
	}
	return host
}

// sameHost compares two hosts as addresses when both are (so two spellings of one IPv6
// address agree), else as names, without resolving anything.
func sameHost(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	x, errX := netip.ParseAddr(a)
	y, errY := netip.ParseAddr(b)
	if errX == nil && errY == nil {
		return x.Unmap() == y.Unmap()
	}
	return strings.EqualFold(a, b)
}

func isLoopback(host string) bool {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().IsLoopback()
	}
	return strings.EqualFold(host, "localhost")
}

func isUnspecified(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsUnspecified()
}
