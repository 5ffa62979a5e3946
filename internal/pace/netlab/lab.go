package netlab

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
)

var (
	// ErrNotRoot is New's and Open's answer when the process is not root.
	ErrNotRoot = errors.New("netlab needs root: it makes network namespaces with ip netns, which mounts them under /run/netns")
	// ErrExists: a named lab of that name is already up.
	ErrExists = errors.New("lab already exists")
	// ErrNoLab: Open found no lab of that name.
	ErrNoLab = errors.New("no such lab")
)

// Options say what kind of lab New makes.
type Options struct {
	// Name, when set, makes a named lab: it outlives this process, is never swept, and is found
	// again by Open. A letter, then up to 19 lower-case letters, digits or "-". Empty: the lab
	// belongs to this process, and the next New after the process dies sweeps it away.
	Name string
}

// Lab is one network segment and the hosts on it. Its methods are safe for concurrent use.
type Lab struct {
	id     string
	subnet netip.Prefix

	mu     sync.Mutex
	hosts  []*Host
	closed bool
}

// newMu serializes this process's News, so that two labs made at once never pick one subnet.
var newMu sync.Mutex

// ownedCount numbers the labs this process owns; guarded by newMu.
var ownedCount int

// New makes a lab with a bridge and no hosts yet, first sweeping away the labs of dead
// processes. Close removes it.
func New(opts Options) (*Lab, error) {
	if err := preflight(); err != nil {
		return nil, err
	}
	newMu.Lock()
	defer newMu.Unlock()
	if err := sweep(); err != nil {
		return nil, fmt.Errorf("sweeping labs of dead processes: %w", err)
	}
	id, err := newID(opts.Name)
	if err != nil {
		return nil, err
	}
	subnet, err := freeSubnet()
	if err != nil {
		return nil, err
	}
	if err := makeBridge(bridgeNS(id), subnet); err != nil {
		return nil, errors.Join(err, removeNamespace(bridgeNS(id)))
	}
	return &Lab{id: id, subnet: subnet}, nil
}

// preflight checks what every lab needs from the machine.
func preflight() error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("netlab needs ip, from the Debian package iproute2: %w", err)
	}
	return nil
}

// newID picks the lab's id: its name, or the next owned id nobody uses yet (a dead process
// with our PID may have left one that the sweep could not tell from ours).
func newID(name string) (string, error) {
	if name != "" {
		if !labName.MatchString(name) {
			return "", fmt.Errorf("lab name %q: want a letter, then up to 19 of a-z, 0-9 and -", name)
		}
		if nsExists(bridgeNS(name)) {
			return "", fmt.Errorf("lab %s: %w", name, ErrExists)
		}
		return name, nil
	}
	for {
		ownedCount++
		if id := ownedID(ownedCount); !nsExists(bridgeNS(id)) {
			return id, nil
		}
	}
}

// freeSubnet is the lowest lab subnet that no live lab on this machine records.
func freeSubnet() (netip.Prefix, error) {
	names, err := namespaces()
	if err != nil {
		return netip.Prefix{}, err
	}
	used := map[netip.Prefix]bool{}
	for _, ns := range names {
		if strings.Contains(strings.TrimPrefix(ns, nsPrefix), "_") {
			continue // a host, not a bridge
		}
		if p, err := bridgeSubnet(ns); err == nil {
			used[p] = true
		}
	}
	for i := range subnetCount {
		if !used[subnetAt(i)] {
			return subnetAt(i), nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("all %d lab subnets are in use", subnetCount)
}

// makeBridge makes the lab's bridge namespace and its bridge, recording the subnet in the
// bridge's alias so that Open and other processes' News can read it back.
func makeBridge(ns string, subnet netip.Prefix) error {
	for _, args := range [][]string{
		{"netns", "add", ns},
		{"-n", ns, "link", "add", bridgeDev, "type", "bridge", "stp_state", "0"},
		{"-n", ns, "link", "set", bridgeDev, "alias", subnet.String(), "up"},
	} {
		if err := ip(args...); err != nil {
			return fmt.Errorf("making the bridge: %w", err)
		}
	}
	return nil
}

// Open finds a named lab that New made, in this process or another, with its hosts.
func Open(name string) (*Lab, error) {
	if err := preflight(); err != nil {
		return nil, err
	}
	if !labName.MatchString(name) || !nsExists(bridgeNS(name)) {
		return nil, fmt.Errorf("lab %q: %w", name, ErrNoLab)
	}
	subnet, err := bridgeSubnet(bridgeNS(name))
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", name, err)
	}
	l := &Lab{id: name, subnet: subnet}
	names, err := namespaces()
	if err != nil {
		return nil, err
	}
	for _, ns := range names {
		host, ok := strings.CutPrefix(ns, bridgeNS(name)+"_")
		if !ok {
			continue
		}
		addr, err := hostAddress(ns)
		if err != nil {
			return nil, fmt.Errorf("lab %s: %w", name, err)
		}
		l.hosts = append(l.hosts, &Host{lab: l, name: host, ns: ns, addr: addr})
	}
	return l, nil
}

// Subnet is the lab's /24.
func (l *Lab) Subnet() netip.Prefix { return l.subnet }

// Hosts lists the lab's hosts in the order they were added (Open: by name).
func (l *Lab) Hosts() []*Host {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*Host(nil), l.hosts...)
}

// Host returns the host of that name, or nil.
func (l *Lab) Host(name string) *Host {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, h := range l.hosts {
		if h.name == name {
			return h
		}
	}
	return nil
}

// Close removes every namespace of the lab, with the processes still running in them, and so
// every veth and the bridge. It removes hosts another process added to a named lab as well.
// Closing twice does nothing.
func (l *Lab) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	names, err := namespaces()
	if err != nil {
		return err
	}
	var errs []error
	for _, ns := range names {
		if strings.HasPrefix(ns, bridgeNS(l.id)+"_") {
			errs = append(errs, removeNamespace(ns))
		}
	}
	errs = append(errs, removeNamespace(bridgeNS(l.id)))
	return errors.Join(errs...)
}
