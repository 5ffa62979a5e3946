package node

import (
	"net"
	"time"
)

// routeCheckEvery is how often an auto-advertised endpoint is re-derived (pace-node §6.1).
// Asking the kernel for a route sends nothing and costs a socket, so checking this often
// catches a DHCP renewal or a network switch within seconds.
const routeCheckEvery = 5 * time.Second

// followRoute keeps an auto-advertised endpoint on the address this machine routes from
// (called every routeCheckEvery). When it moves, the registrar withdraws the registrations
// under the old endpoint and registers under the new one at once; a lease already signed for
// the old endpoint is refused by this worker from then on (its endpoint check), and the client
// compiles locally.
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
	n.counters.endpointChanges.Add(1)
	n.log.Info("advertised endpoint moved; leases naming the old one are refused until they expire",
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
