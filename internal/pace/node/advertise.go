package node

import (
	"net"
	"slices"
	"sync"
	"time"
)

// routeCheckEvery is how often an auto-advertised endpoint is re-derived (pace-node §6.1).
// Asking the kernel for a route sends nothing and costs a socket, so checking this often
// catches a DHCP renewal or a network switch within seconds.
const routeCheckEvery = 5 * time.Second

// followRoute keeps an auto-advertised endpoint on the address this machine routes from
// (called every routeCheckEvery). When it moves, the registrar withdraws the registrations
// under the old endpoint and registers under the new one at once; a lease already granted for
// the old endpoint is honoured until it expires (formerEndpoints).
func (n *Node) followRoute() {
	if n.followsRoute.Load() {
		n.rederiveAdvertise()
	}
}

// rederiveAdvertise moves the advertised endpoint to the routed-from address when that changed.
// A machine that routes nowhere for a moment keeps its last endpoint.
func (n *Node) rederiveAdvertise() {
	routed, err := n.env.RoutedFrom()
	if err != nil {
		return
	}
	old := n.endpoint()
	next := net.JoinHostPort(routed, portOf(old))
	if next != old {
		n.moveEndpoint(old, next, "the address this machine routes from changed")
	}
}

// moveEndpoint publishes a new advertised endpoint, counts it and wakes the registrar.
func (n *Node) moveEndpoint(from, to, why string) {
	n.advertise.Store(&to)
	n.former.moved(from, to, n.now())
	n.counters.endpointChanges.Add(1)
	n.log.Info("advertised endpoint moved; leases granted for the old one are honoured until they expire",
		"from", from, "to", to, "why", why)
	select {
	case n.endpointMoved <- struct{}{}:
	default: // a wake-up is already pending
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
