// Command netlab makes named labs of machines on this host for shell scripts (the demo, make
// bench): each host is a network namespace with its own address on one bridge, and a script
// runs a program on it with `ip netns exec <ns> ...`. Nothing keeps running: a lab stays until
// `down`. Needs root.
//
//	netlab up --name=X --hosts=a,b,c     prints "host=<name> ns=<netns> addr=<ip>" per host
//	netlab down --name=X                 removes the lab and kills what still runs in it
//	netlab isolate --name=X HOST         cuts HOST off from the other hosts
//	netlab rejoin --name=X HOST          heals isolate
//	netlab block-udp --name=X HOST PORT  drops UDP datagrams arriving at PORT on HOST
//	netlab unblock-udp --name=X HOST PORT
//	netlab forward --name=X HOST TO      listens on 127.0.0.1 (port printed) and carries each
//	                                     connection to TO as dialled inside HOST; runs until killed
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/netlab"
)

const usage = `usage: netlab up --name=X --hosts=a,b,c | down --name=X |
       isolate|rejoin --name=X HOST | block-udp|unblock-udp --name=X HOST PORT |
       forward --name=X HOST TO`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	fs := flag.NewFlagSet("netlab "+os.Args[1], flag.ExitOnError)
	name := fs.String("name", "", "the lab's name: a letter, then up to 19 of a-z, 0-9 and -")
	hosts := fs.String("hosts", "", "up: the hosts, comma-separated")
	fs.Parse(os.Args[2:])
	if *name == "" {
		fmt.Fprintln(os.Stderr, "netlab: --name is required\n"+usage)
		os.Exit(2)
	}
	if err := run(os.Args[1], *name, *hosts, fs.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "netlab:", err)
		os.Exit(1)
	}
}

// run carries out one verb.
func run(verb, name, hosts string, args []string) error {
	switch verb {
	case "up":
		return up(name, hosts)
	case "down":
		l, err := netlab.Open(name)
		if errors.Is(err, netlab.ErrNoLab) {
			return nil // already down: scripts call down from their exit traps
		}
		if err != nil {
			return err
		}
		return l.Close()
	case "isolate", "rejoin", "block-udp", "unblock-udp":
		return onHost(verb, name, args)
	case "forward":
		return forward(name, args)
	}
	return fmt.Errorf("unknown verb %q\n%s", verb, usage)
}

// up makes the lab and prints its hosts; a lab that cannot be completed is removed again.
func up(name, hosts string) error {
	if hosts == "" {
		return errors.New("up needs --hosts")
	}
	l, err := netlab.New(netlab.Options{Name: name})
	if err != nil {
		return err
	}
	for _, h := range strings.Split(hosts, ",") {
		if _, err := l.AddHost(h); err != nil {
			return errors.Join(err, l.Close())
		}
	}
	for _, h := range l.Hosts() {
		fmt.Printf("host=%s ns=%s addr=%s\n", h.Name(), h.Namespace(), h.Addr())
	}
	return nil
}

// onHost runs a verb that acts on one host of an existing lab.
func onHost(verb, name string, args []string) error {
	want := 1
	if strings.HasSuffix(verb, "-udp") {
		want = 2
	}
	if len(args) != want {
		return fmt.Errorf("%s takes %d arguments\n%s", verb, want, usage)
	}
	l, err := netlab.Open(name)
	if err != nil {
		return err
	}
	h := l.Host(args[0])
	if h == nil {
		return fmt.Errorf("lab %s has no host %q", name, args[0])
	}
	switch verb {
	case "isolate":
		return h.Isolate()
	case "rejoin":
		return h.Rejoin()
	}
	port, err := strconv.ParseUint(args[1], 10, 16)
	if err != nil || port == 0 {
		return fmt.Errorf("port %q: want 1 to 65535", args[1])
	}
	if verb == "block-udp" {
		return h.BlockUDPPort(uint16(port))
	}
	return h.UnblockUDPPort(uint16(port))
}
