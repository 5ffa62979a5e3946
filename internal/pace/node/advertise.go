package node

import (
	"net"
	"slices"
	"sync"
	"time"
)

// routeCheckEvery is how often auto endpoints are re-derived (pace-node §6.1,
// pace-consensus §7.4). Asking the kernel for a route sends nothing and costs a socket, so
// checking this often catches a DHCP renewal or a network switch within seconds.
const routeCheckEvery = 5 * time.Second

// followRoute keeps auto endpoints on the address this machine routes from (called every
// routeCheckEvery): the advertised endpoint, and the consensus endpoint unless --raft-self pins
// it. When the address moved, every consensus link is ended, since a connection made from the
// old address leads nowhere, and made again from the new one; the node announces itself at
// once, so the leader records the move (pace-consensus §7.4); and the registrar withdraws the
// registrations under the old endpoint and registers under the new one. A lease already
// granted for the old endpoint is honoured until it expires (formerEndpoints).
func (n *Node) followRoute() {
	follows := n.followsRoute.Load()
	if !follows && !n.raftFollowsRoute {
		return
	}
	routed, err := n.env.RoutedFrom()
	if err != nil {
		return // a machine that routes nowhere for a moment keeps its last endpoints
	}
	moved := follows && n.rederiveAdvertise(routed)
	if n.raftFollowsRoute && n.rederiveConsensus(routed) {
		moved = true
	}
	if moved {
		n.links.transport.Reconnect()
		n.wake(n.announceNow)
	}
}

// rederiveAdvertise moves the advertised endpoint to the routed-from address when that changed.
func (n *Node) rederiveAdvertise(routed string) bool {
	old := n.endpoint()
	next := net.JoinHostPort(routed, portOf(old))
	if next == old {
		return false
	}
	n.moveEndpoint(old, next, "the address this machine routes from changed")
	return true
}

// rederiveConsensus moves the consensus endpoint to the routed-from address, on its port, when
// that changed, and counts it.
func (n *Node) rederiveConsensus(routed string) bool {
	old := n.consensusEndpoint()
	next := net.JoinHostPort(routed, portOf(old))
	if old == "" || next == old {
		return false
	}
	n.raftEndpoint.Store(&next)
	n.counters.raftEndpointChanges.Add(1)
	n.log.Info("consensus endpoint moved; the consensus links are made again from the new address and the leader is told",
		"from", old, "to", next)
	return true
}

// moveEndpoint publishes a new advertised endpoint, counts it and wakes the registrar and the
// announcer.
func (n *Node) moveEndpoint(from, to, why string) {
	n.advertise.Store(&to)
	n.former.moved(from, to, n.now())
	n.counters.endpointChanges.Add(1)
	n.log.Info("advertised endpoint moved; leases granted for the old one are honoured until they expire",
		"from", from, "to", to, "why", why)
	n.wake(n.endpointMoved)
	n.wake(n.announceNow)
}

// wake signals a loop waiting on c; a wake-up already pending is enough.
func (n *Node) wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// boundEndpoint puts the port the kernel chose for a ":0" node port into adv.
func (n *Node) boundEndpoint(adv string) string {
	if portOf(adv) != "0" {
		return adv
	}
	return net.JoinHostPort(hostOf(adv), portOf(n.nodeLn.Addr().String()))
}

// formerEndpoints remembers when this node stopped advertising each endpoint it had, so its
// worker honours a lease granted for one of them until the lease expires (pace-node §6.1).
// Only the last few moves are kept: a lease lives an hour at most.
type formerEndpoints struct {
	mu    sync.Mutex
	moves []formerEndpoint
}

type formerEndpoint struct {
	endpoint string
	movedAt  time.Time
}

const formerEndpointsKept = 8

func (f *formerEndpoints) moved(from, to string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.moves = slices.DeleteFunc(f.moves, func(m formerEndpoint) bool { return m.endpoint == from || m.endpoint == to })
	if len(f.moves) == formerEndpointsKept {
		f.moves = f.moves[1:]
	}
	f.moves = append(f.moves, formerEndpoint{endpoint: from, movedAt: at})
}

// movedFrom is worker.Config.MovedFrom.
func (f *formerEndpoints) movedFrom(endpoint string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.moves {
		if m.endpoint == endpoint {
			return m.movedAt, true
		}
	}
	return time.Time{}, false
}
