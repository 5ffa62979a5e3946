package node

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// DiscoveryPort is where beacons are sent and heard unless --discovery names another
// (pace-node §9.1).
const DiscoveryPort = 6681

// Discovery is --discovery and --discovery-reply-port: where beacons are sent (every eligible
// interface's directed broadcast when Targets is empty), the port they are heard on, and the
// reply socket's port (0: the kernel's choice). Off turns discovery off.
type Discovery struct {
	Off        bool
	Targets    []string // host:port send targets
	BeaconPort int
	ReplyPort  int
}

// addTargets reads one --discovery value: off, auto (the default), or a comma-separated list of host[:port]
// (port 6681 when left out). The first target's port is the beacon port.
func (d *Discovery) addTargets(v string) error {
	switch strings.TrimSpace(v) {
	case "off":
		d.Off, d.Targets, d.BeaconPort = true, nil, 0
		return nil
	case "auto": // the default: every eligible interface's directed broadcast
		d.Off, d.Targets, d.BeaconPort = false, nil, 0
		return nil
	}
	d.Off = false // the last --discovery wins over an earlier off
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		host, port, err := net.SplitHostPort(part)
		if err != nil {
			host, port = part, strconv.Itoa(DiscoveryPort)
		}
		n, perr := strconv.Atoi(port)
		if host == "" || strings.ContainsAny(host, " /") || perr != nil || n < 1 || n > 65535 {
			return fmt.Errorf("--discovery=%q: want off, auto, or host[:port] send targets (a broadcast address, or peers)", v)
		}
		if len(d.Targets) == 0 {
			d.BeaconPort = n
		}
		d.Targets = append(d.Targets, net.JoinHostPort(host, port))
	}
	return nil
}

func (d Discovery) beaconPort() int {
	if d.BeaconPort == 0 {
		return DiscoveryPort
	}
	return d.BeaconPort
}

// discoverySurfaces are the two UDP rows of the surface table. The sockets always bind the
// wildcard: --discovery names where beacons are sent, not where they are heard.
func (p *Plan) discoverySurfaces() {
	d := p.Cfg.Discovery
	if d.Off {
		p.Surfaces = append(p.Surfaces,
			Surface{Name: "discovery beacon", Proto: "UDP", Note: "not served: --discovery=off"},
			Surface{Name: "discovery reply", Proto: "UDP", Note: "not served: --discovery=off"})
		return
	}
	if d.ReplyPort < 0 || d.ReplyPort > 65535 {
		p.violate("--discovery-reply-port=%d is not a port", d.ReplyPort)
	}
	beacon := Surface{Name: "discovery beacon", Bind: net.JoinHostPort("0.0.0.0", strconv.Itoa(d.beaconPort())), Proto: "UDP"}
	reply := Surface{Name: "discovery reply", Bind: "0.0.0.0:*", Proto: "UDP, port chosen by the kernel at bind"}
	if d.ReplyPort > 0 {
		reply.Bind, reply.Proto = net.JoinHostPort("0.0.0.0", strconv.Itoa(d.ReplyPort)), "UDP"
	}
	if d.ReplyPort == d.beaconPort() {
		p.violate("--discovery-reply-port=%d is the beacon port: answers must arrive on a socket of this node's own, not the one every node on the machine shares", d.ReplyPort)
	}
	p.Surfaces = append(p.Surfaces, beacon, reply)
}
