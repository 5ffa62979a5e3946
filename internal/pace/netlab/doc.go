// Package netlab builds a small network of machines on this one host, for tests and scripts
// that need processes to talk across a real network: each host is a network namespace with its
// own address on one shared segment, and its programs are started as real processes inside it.
// No production code imports it.
//
// A lab is one bridge in a namespace of its own, plus one namespace per host joined to that
// bridge by a veth pair (eth0 on the host's side). Nothing is created in the root namespace:
// no interface, no address, no route, no sysctl and no firewall rule, so the machine's own
// networking is untouched however a lab ends, and no lab can reach the outside world or another
// lab. Each lab still gets its own /24 under 10.200.0.0/13, the lowest one no live lab uses, so
// that addresses in logs say which lab they belong to; two labs with the same subnet would not
// interfere anyway, because their segments are separate.
//
// Namespaces are named netlab_<lab> for the bridge and netlab_<lab>_<host> for each host. A lab
// made by New without a name is owned by the creating process, and <lab> is "<pid>.<n>": New
// first sweeps away the labs whose owner has died (a test killed before its Close), with every
// process still running inside them. A named lab (Options.Name) outlives its creator, as the
// shell scripts need, and is removed only by Close (the netlab command's "down").
//
// Host.Isolate detaches the host's port from the bridge, like unplugging its cable at the
// switch while the host's own link stays up: its programs see no interface change, and every
// packet to or from the other hosts is silently lost until Host.Rejoin. Host.BlockUDPPort drops
// the UDP datagrams arriving at one port of one host, as a host firewall would, with an
// nftables table inside that host's namespace. Host.Readdress moves a host to another free
// address of the subnet, as a new DHCP lease would, and Host.RouteDefault gives it a default
// route out of eth0, so a program asking which address the host routes from finds its own.
//
// Everything here needs root: namespaces are made with ip netns, which mounts them under
// /run/netns. New says so in its error rather than skipping, and callers fail on it.
package netlab
