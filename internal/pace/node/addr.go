package node

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// parseListen reads a `[addr:]port` bind: a bare port binds defaultHost; an empty value is
// "closed"; port 0 lets the kernel choose (the ready line names the port it chose). An empty host before a colon (":6674") is refused as a typo, echoing the value.
func parseListen(flagName, v, defaultHost string) (string, error) {
	if v == "" {
		return "", nil
	}
	if port, err := strconv.Atoi(v); err == nil {
		if port < 0 || port > 65535 {
			return "", fmt.Errorf("--%s=%s: a port is 0 to 65535", flagName, v)
		}
		return net.JoinHostPort(defaultHost, v), nil
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return "", fmt.Errorf("--%s=%s: want [addr:]port (%v)", flagName, v, err)
	}
	if host == "" {
		return "", fmt.Errorf("--%s=%s: the address before ':' is empty; write a bare port (%s) for the default bind, or an address", flagName, v, port)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("--%s=%s: bad port", flagName, v)
	}
	return v, nil
}

// parseDial reads a dial address, which must be host:port (pace-node §3.4 rule 9).
func parseDial(flagName, v string) error {
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("--%s=%s: want host:port", flagName, v)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("--%s=%s: bad port", flagName, v)
	}
	return nil
}

func portOf(hostport string) string {
	_, port, _ := net.SplitHostPort(hostport)
	return port
}

func hostOf(hostport string) string {
	host, _, _ := net.SplitHostPort(hostport)
	return host
}

// isLoopbackHost reports a host that reaches only this machine.
func isLoopbackHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}

// isWildcardHost reports an unspecified address ("bind everything"), which nobody can dial.
func isWildcardHost(h string) bool {
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsUnspecified()
}

// routedFrom returns the address this machine routes from: the local address of a UDP
// "connection" to a documentation address. Connecting a UDP socket sends nothing; it only asks
// the kernel for the route.
func routedFrom() (string, error) {
	c, err := net.Dial("udp", "203.0.113.1:9")
	if err != nil {
		return "", fmt.Errorf("no route: %w", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String(), nil
}

// LocalNodeAddr is where a process on this machine reaches its own node: loopback, on the
// --listen-node port. Operator verbs default to it, and ask it for machine tickets.
func LocalNodeAddr(c Config) string {
	port := c.ListenNode
	if i := strings.LastIndexByte(port, ':'); i >= 0 {
		port = port[i+1:]
	}
	return net.JoinHostPort("127.0.0.1", port)
}
