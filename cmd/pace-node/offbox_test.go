package main

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// offBoxClient runs inside a network namespace (PACE_OFFBOX_TARGET set): it asks the node, as a
// machine that is not the node's, for a cached value and for a lease, and prints what came back.
func offBoxClient(target string) int {
	for _, q := range []struct {
		op      wire.Op
		payload []byte
	}{
		{wire.OpFetch, wire.AppendStringField(nil, "some-key")},
		{wire.OpLease, verbs.LeaseRequest{Fingerprint: "fp", Key: "k"}.Append(nil)},
	} {
		nc, err := net.DialTimeout("tcp", target, 5*time.Second)
		if err != nil {
			fmt.Println("dial", err)
			return 1
		}
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		nc.Write(append(wire.AppendRequestHeader(nil, wire.NewRequestHeader(q.op, uint32(len(q.payload)))), q.payload...))
		_, _, err = wire.ReadReply(bufio.NewReader(nc), q.op, wire.DefaultSessionCap, nil)
		var r wire.Refusal
		if errors.As(err, &r) {
			fmt.Printf("%s %s\n", q.op, r.Code)
		} else {
			fmt.Printf("%s answered %v\n", q.op, err)
		}
		nc.Close()
	}
	return 0
}

// netns runs ip(8) and fails the test on error.
func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %v: %v\n%s", args, err, out)
	}
}

// TestOffBoxCallersAreRefusedNotAMember puts a client in its own network namespace, joined to
// this machine by a veth pair, so its requests come from an address that is not this machine:
// the cache tier refuses it not-a-member whatever the bind, and so does the scheduler without a
// proof or a ticket.
func TestOffBoxCallersAreRefusedNotAMember(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test creates a network namespace and needs root (CI runs as root)")
	}
	ns := fmt.Sprintf("pacetest%d", rand.IntN(1e6))
	host, peer := "vh"+ns[8:], "vp"+ns[8:]
	ipCmd(t, "netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run(); exec.Command("ip", "link", "del", host).Run() })
	ipCmd(t, "link", "add", host, "type", "veth", "peer", "name", peer)
	ipCmd(t, "link", "set", peer, "netns", ns)
	ipCmd(t, "addr", "add", "10.231.77.1/24", "dev", host)
	ipCmd(t, "link", "set", host, "up")
	ipCmd(t, "netns", "exec", ns, "ip", "addr", "add", "10.231.77.2/24", "dev", peer)
	ipCmd(t, "netns", "exec", ns, "ip", "link", "set", peer, "up")

	n := startNode(t, t.TempDir())
	port := strings.TrimPrefix(n.addr, "127.0.0.1:")
	cmd := exec.Command("ip", "netns", "exec", ns, os.Args[0])
	cmd.Env = append(os.Environ(), "PACE_OFFBOX_TARGET=10.231.77.1:"+port)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("off-box client: %v\n%s", err, out)
	}
	for _, want := range []string{"FETCH not-a-member", "LEASE not-a-member"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("off-box client saw:\n%s\nwant %q", out, want)
		}
	}
	if n.metric("pace_node_cache_requests_refused_not_local_total") != 1 {
		t.Error("the off-box FETCH was not counted")
	}
	// The same FETCH from this machine is served (a miss, not a refusal).
	if _, _, err := ask(t, n.addr, wire.OpFetch, wire.AppendStringField(nil, "some-key")); err != nil {
		t.Fatalf("local FETCH: %v", err)
	}
}
