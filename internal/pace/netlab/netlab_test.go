package netlab

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// greetPort is where the TCP helpers listen.
const greetPort = "7000"

// unreachable is how long a dial must fail for for a host to count as cut off.
const unreachable = 300 * time.Millisecond

// greet dials the greeter at to:greetPort from inside from and returns its greeting.
func greet(from, to *Host, timeout time.Duration) (string, error) {
	return greetAt(from, to.Addr(), timeout)
}

// greetAt dials the greeter at addr:greetPort from inside from and returns its greeting.
func greetAt(from *Host, addr string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := from.DialContext(ctx, "tcp", net.JoinHostPort(addr, greetPort))
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// serveGreetings starts a greeter helper process in every host.
func serveGreetings(t *testing.T, hosts ...*Host) {
	for _, h := range hosts {
		startHelper(t, h, "serve-tcp", net.JoinHostPort(h.Addr(), greetPort), h.Name())
	}
}

func TestHostsReachEachOtherOverTCP(t *testing.T) {
	t.Parallel()
	_, hosts := ForTest(t, "a", "b", "c")
	serveGreetings(t, hosts...)
	for _, from := range hosts {
		for _, to := range hosts {
			got, err := greet(from, to, 2*time.Second)
			if want := "hello from " + to.Name(); err != nil || got != want {
				t.Errorf("%s -> %s: got %q, %v; want %q", from.Name(), to.Name(), got, err, want)
			}
		}
	}
	// From a process started in a host, as a script or a pace-node would be, to a server of
	// the test's own listening in another.
	ln, err := hosts[0].Listen("tcp", net.JoinHostPort(hosts[0].Addr(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Write([]byte("hello from the test\n"))
			c.Close()
		}
	}()
	dial := newHelper(t, hosts[2], "dial-tcp", ln.Addr().String())
	out, err := dial.cmd.Output()
	if got := strings.TrimSpace(string(out)); err != nil || got != "hello from the test" {
		t.Errorf("dial-tcp in c to a listener in a: got %q, %v; stderr %s", got, err, dial.cmd.Stderr)
	}
}

func TestIsolatedHostCannotReachOrBeReachedUntilRejoin(t *testing.T) {
	t.Parallel()
	_, hosts := ForTest(t, "a", "b", "c")
	a, b, c := hosts[0], hosts[1], hosts[2]
	serveGreetings(t, hosts...)
	if err := a.Isolate(); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]*Host{{a, b}, {b, a}, {c, a}} {
		if got, err := greet(pair[0], pair[1], unreachable); err == nil {
			t.Errorf("%s -> %s while %s is isolated: got %q", pair[0].Name(), pair[1].Name(), a.Name(), got)
		}
	}
	if _, err := greet(b, c, 2*time.Second); err != nil {
		t.Errorf("b -> c while a is isolated: %v", err)
	}
	if _, err := greet(a, a, 2*time.Second); err != nil {
		t.Errorf("a -> a while isolated (its own address still works): %v", err)
	}
	if err := a.Rejoin(); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]*Host{{a, b}, {b, a}, {c, a}} {
		if _, err := greet(pair[0], pair[1], 3*time.Second); err != nil {
			t.Errorf("%s -> %s after rejoin: %v", pair[0].Name(), pair[1].Name(), err)
		}
	}
}

func TestUDPBroadcastReachesEveryOtherHost(t *testing.T) {
	t.Parallel()
	_, hosts := ForTest(t, "a", "b", "c")
	var receivers []*helper
	for _, h := range hosts[1:] {
		receivers = append(receivers, startHelper(t, h, "recv-udp", "6681"))
	}
	send(t, hosts[0], hosts[0].Broadcast(), "6681", "beacon")
	for i, r := range receivers {
		want := "port=6681 from=" + hosts[0].Addr() + " beacon"
		if got, _ := r.next(2 * time.Second); got != want {
			t.Errorf("%s heard %q; want %q", hosts[i+1].Name(), got, want)
		}
	}
}

func TestBlockedUDPPortDropsOnlyThatPort(t *testing.T) {
	t.Parallel()
	_, hosts := ForTest(t, "a", "b")
	a, b := hosts[0], hosts[1]
	r := startHelper(t, b, "recv-udp", "6681", "6682")
	if err := b.BlockUDPPort(6682); err != nil {
		t.Fatal(err)
	}
	if err := b.BlockUDPPort(6682); err != nil {
		t.Fatalf("blocking twice: %v", err)
	}
	send(t, a, b.Addr(), "6682", "reply")
	send(t, a, a.Broadcast(), "6682", "reply-broadcast")
	send(t, a, a.Broadcast(), "6681", "beacon")
	if got, _ := r.next(2 * time.Second); got != "port=6681 from="+a.Addr()+" beacon" {
		t.Errorf("with 6682 blocked, b heard %q; want only the beacon on 6681", got)
	}
	if got, ok := r.next(unreachable); ok {
		t.Errorf("with 6682 blocked, b also heard %q", got)
	}
	for range 2 { // the second one is a no-op
		if err := b.UnblockUDPPort(6682); err != nil {
			t.Fatal(err)
		}
	}
	send(t, a, b.Addr(), "6682", "reply")
	if got, _ := r.next(2 * time.Second); got != "port=6682 from="+a.Addr()+" reply" {
		t.Errorf("after unblocking, b heard %q", got)
	}
}

// send sends one datagram from inside host to ip:port.
func send(t *testing.T, host *Host, ip, port, payload string) {
	t.Helper()
	c, err := host.ListenPacket("udp4", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	to, err := net.ResolveUDPAddr("udp4", net.JoinHostPort(ip, port))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteTo([]byte(payload), to); err != nil {
		t.Fatalf("sending to %s from %s: %v", to, host.Name(), err)
	}
}

func TestCloseLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	linksBefore := rootLinks(t)
	l, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, name := range []string{"a", "b"} {
		h, err := l.AddHost(name)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Namespace())
	}
	names = append(names, bridgeNS(l.id))
	running := startHelper(t, l.Host("a"), "sleep")
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := running.killed(15 * time.Second); err != nil {
		t.Errorf("a process in a closed lab's host: %v", err)
	}
	listed := netnsList(t)
	for _, ns := range names {
		if slices.Contains(listed, ns) {
			t.Errorf("%s is still in ip netns list after Close", ns)
		}
	}
	if after := rootLinks(t); !slices.Equal(after, linksBefore) {
		t.Errorf("the root namespace's links changed: before %v, after %v", linksBefore, after)
	}
	if _, err := l.AddHost("c"); err == nil {
		t.Errorf("AddHost after Close succeeded")
	}
}

// rootLinks lists the interfaces of the root namespace by name.
func rootLinks(t *testing.T) []string {
	t.Helper()
	var links []struct {
		Name string `json:"ifname"`
	}
	if err := ipJSON(&links, "link", "show"); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range links {
		names = append(names, l.Name)
	}
	slices.Sort(names)
	return names
}

// netnsList is what ip netns list shows, one name per line with the id after it.
func netnsList(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

func TestTwoLabsAtOnceDoNotCollide(t *testing.T) {
	t.Parallel()
	var labs [2]*Lab
	var hosts [2][]*Host
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			var err error
			labs[i], hosts[i], err = makeLab("a", "b")
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, l := range labs {
		if l != nil {
			t.Cleanup(func() { l.Close() })
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if labs[0].Subnet() == labs[1].Subnet() {
		t.Errorf("two live labs share the subnet %s", labs[0].Subnet())
	}
	if hosts[0][0].Namespace() == hosts[1][0].Namespace() {
		t.Errorf("two labs' hosts share the namespace %s", hosts[0][0].Namespace())
	}
	serveGreetings(t, hosts[1]...)
	if got, err := greet(hosts[0][1], hosts[1][0], unreachable); err == nil {
		t.Errorf("a host of one lab reached a host of another: %q", got)
	}
	if _, err := greet(hosts[1][1], hosts[1][0], 2*time.Second); err != nil {
		t.Errorf("within the second lab: %v", err)
	}
}

// makeLab is ForTest for another goroutine than the test's, which may not fail the test.
func makeLab(names ...string) (*Lab, []*Host, error) {
	l, err := New(Options{})
	if err != nil {
		return nil, nil, err
	}
	var hosts []*Host
	for _, name := range names {
		h, err := l.AddHost(name)
		if err != nil {
			return l, nil, err
		}
		hosts = append(hosts, h)
	}
	return l, hosts, nil
}

func TestNewSweepsTheLabsOfDeadProcesses(t *testing.T) {
	t.Parallel()
	owner := startHelper(t, nil, "own-lab")
	line, _ := owner.next(5 * time.Second)
	left := strings.Fields(line)
	if len(left) != 2 {
		t.Fatalf("own-lab printed %q; want the bridge and host namespaces", line)
	}
	serve := startHelper(t, mustOpenOwned(t, left[1]), "sleep")
	owner.cmd.Process.Signal(syscall.SIGKILL)
	if err := owner.killed(15 * time.Second); err != nil {
		t.Fatalf("own-lab, sent SIGKILL: %v", err)
	}

	l, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, ns := range left {
		if slices.Contains(netnsList(t), ns) {
			t.Errorf("%s outlived its process's death and the next New", ns)
		}
	}
	if err := serve.killed(15 * time.Second); err != nil {
		t.Errorf("the process in the dead lab's host: %v", err)
	}
}

// mustOpenOwned is a handle on a host of another process's lab, enough to start a program in it.
func mustOpenOwned(t *testing.T, ns string) *Host {
	t.Helper()
	if !nsExists(ns) {
		t.Fatalf("%s does not exist", ns)
	}
	return &Host{name: "a", ns: ns}
}

func TestOpenFindsANamedLab(t *testing.T) {
	t.Parallel()
	name := fmt.Sprintf("test%d", os.Getpid())
	if stale, err := Open(name); err == nil {
		stale.Close() // a killed run of this process's PID left it
	}
	made, err := New(Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	defer made.Close()
	for _, name := range []string{"x", "y"} {
		if _, err := made.AddHost(name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := New(Options{Name: name}); err == nil {
		t.Errorf("a second lab of the same name was made")
	}
	l, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range l.Hosts() {
		got = append(got, h.Name()+"="+h.Addr())
	}
	want := []string{"x=" + made.Host("x").Addr(), "y=" + made.Host("y").Addr()}
	if !slices.Equal(got, want) || l.Subnet() != made.Subnet() {
		t.Errorf("Open: hosts %v in %s; want %v in %s", got, l.Subnet(), want, made.Subnet())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(name); err == nil {
		t.Errorf("Open found the lab after Close")
	}
}
