package netlab

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"sync"
	"syscall"
)

// ErrClosed: the lab was closed.
var ErrClosed = errors.New("lab closed")

// Host is one machine of a lab: a network namespace with lo up and eth0 on the lab's segment.
type Host struct {
	lab  *Lab
	name string
	ns   string

	mu   sync.Mutex // guards addr, which Readdress changes
	addr netip.Addr
}

// AddHost makes a host: a letter, then up to 12 lower-case letters, digits or "-". It gets the
// lowest free address of the subnet, starting at .1.
func (l *Lab) AddHost(name string) (*Host, error) {
	if !hostName.MatchString(name) {
		return nil, fmt.Errorf("host name %q: want a letter, then up to 12 of a-z, 0-9 and -", name)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	addr, err := l.freeAddr(name)
	if err != nil {
		return nil, err
	}
	h := &Host{lab: l, name: name, ns: hostNS(l.id, name), addr: addr}
	if err := h.plug(); err != nil {
		return nil, errors.Join(fmt.Errorf("adding host %s: %w", name, err), removeNamespace(h.ns))
	}
	l.hosts = append(l.hosts, h)
	return h, nil
}

// freeAddr is the lowest host address nobody in the lab has; the caller holds l.mu.
func (l *Lab) freeAddr(name string) (netip.Addr, error) {
	taken := map[netip.Addr]bool{}
	for _, h := range l.hosts {
		if h.name == name {
			return netip.Addr{}, fmt.Errorf("host %s is already in the lab", name)
		}
		taken[h.address()] = true
	}
	for i := 1; i < 255; i++ {
		if a := hostAddr(l.subnet, i); !taken[a] {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("the lab's subnet %s is full", l.subnet)
}

// plug makes the host's namespace and wires it to the bridge. The veth pair is made inside the
// bridge's namespace with its far end put straight into the host's, so neither end ever
// appears in the root namespace.
func (h *Host) plug() error {
	br := bridgeNS(h.lab.id)
	prefix := fmt.Sprintf("%s/%d", h.addr, h.lab.subnet.Bits())
	for _, args := range [][]string{
		{"netns", "add", h.ns},
		{"-n", h.ns, "link", "set", "lo", "up"},
		{"-n", br, "link", "add", portName(h.name), "type", "veth", "peer", "name", hostDev, "netns", h.ns},
		{"-n", br, "link", "set", portName(h.name), "master", bridgeDev, "up"},
		{"-n", h.ns, "addr", "add", prefix, "brd", "+", "dev", hostDev},
		{"-n", h.ns, "link", "set", hostDev, "up"},
	} {
		if err := ip(args...); err != nil {
			return err
		}
	}
	return nil
}

// Name is the host's name in the lab.
func (h *Host) Name() string { return h.name }

// Namespace is the host's network namespace, for `ip netns exec <namespace> ...`.
func (h *Host) Namespace() string { return h.ns }

// Addr is the host's IPv4 address on the lab's segment: the one it has now, after any
// Readdress.
func (h *Host) Addr() string { return h.address().String() }

func (h *Host) address() netip.Addr {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.addr
}

// Broadcast is the directed broadcast address of the host's subnet.
func (h *Host) Broadcast() string { return broadcastOf(h.lab.subnet).String() }

// Command prepares a program to run inside the host, through ip netns exec (which execs the
// program, so the Cmd's process is the program itself). The program is killed when ctx ends,
// and also when the thread that started it exits, so that a test killed outright leaves no
// servers behind; whatever escapes both dies when the lab is closed or swept.
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.ns, name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Isolate partitions the host from every other host: its port is taken off the bridge, so the
// host keeps its link, its address and its processes, and every packet between it and the rest
// of the lab is silently lost, as when a switch port dies. Isolating twice does nothing.
func (h *Host) Isolate() error {
	if err := ip("-n", bridgeNS(h.lab.id), "link", "set", portName(h.name), "nomaster"); err != nil {
		return fmt.Errorf("isolating %s: %w", h.name, err)
	}
	return nil
}

// Rejoin heals Isolate: the port goes back on the bridge and forwards at once (the bridge runs
// no spanning tree, so there is no listening delay).
func (h *Host) Rejoin() error {
	if err := ip("-n", bridgeNS(h.lab.id), "link", "set", portName(h.name), "master", bridgeDev); err != nil {
		return fmt.Errorf("rejoining %s: %w", h.name, err)
	}
	return nil
}
