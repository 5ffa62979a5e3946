package node

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// TestAnAutoEndpointFollowsTheRoute starts a real node whose node port binds every address,
// moves the address this machine "routes from", and checks the node advertises the new
// endpoint, counts the move, and re-registers its worker under it with nothing left under the
// old one. Its consensus port binds loopback only, so its consensus endpoint stays.
func TestAnAutoEndpointFollowsTheRoute(t *testing.T) {
	var routed atomic.Pointer[string]
	first := "127.0.0.2"
	routed.Store(&first)
	env := Env{RoutedFrom: func() (string, error) { return *routed.Load(), nil },
		DefaultStateDir: func() (string, string, error) { return t.TempDir(), "test", nil }}
	cfg, err := Load([]string{"--discovery=off", "--cluster-dir=" + t.TempDir(), "--listen-node=0", "--listen-raft=127.0.0.1:0",
		"--slots=1", "--toolchain=gcc", "--cache-memory=0"}, 8<<30)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Start(context.Background(), cfg, env, slog.New(slog.NewTextHandler(io.Discard, nil)), new(slog.LevelVar))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop(context.Background())
	port := portOf(n.Addr().String())
	if n.endpoint() != "127.0.0.2:"+port {
		t.Fatalf("advertised %s", n.endpoint())
	}
	waitRegisteredAt(t, n, "127.0.0.2:"+port)
	raftEP := n.consensusEndpoint()
	moved := "127.0.0.3"
	routed.Store(&moved)
	n.followRoute()
	if n.endpoint() != "127.0.0.3:"+port || n.counters.endpointChanges.Load() != 1 {
		t.Fatalf("after the move: advertised %s, %d changes", n.endpoint(), n.counters.endpointChanges.Load())
	}
	if n.consensusEndpoint() != raftEP || n.counters.raftEndpointChanges.Load() != 0 {
		t.Fatalf("a consensus endpoint bound to loopback moved: %s (was %s)", n.consensusEndpoint(), raftEP)
	}
	waitRegisteredAt(t, n, "127.0.0.3:"+port)
	if _, ok := n.former.movedFrom("127.0.0.2:" + port); !ok {
		t.Fatal("the worker does not know it advertised the old endpoint: leases granted for it would be refused")
	}
	n.followRoute()
	if n.counters.endpointChanges.Load() != 1 {
		t.Fatal("an unchanged route counted as a move")
	}
}

// TestAMovedNodeIsReRecordedByItsFleet (pace-consensus §7.4): a node with no worker whose node
// and consensus ports bind every address founds a fleet recording both endpoints at the address
// it routes from. When that address moves, both endpoints follow, each move is counted once,
// and the node's announcement has its fleet record the new ones.
func TestAMovedNodeIsReRecordedByItsFleet(t *testing.T) {
	var routed atomic.Pointer[string]
	first := "127.0.0.2"
	routed.Store(&first)
	env := Env{RoutedFrom: func() (string, error) { return *routed.Load(), nil },
		DefaultStateDir: func() (string, string, error) { return t.TempDir(), "test", nil }}
	cfg, err := Load([]string{"--discovery=off", "--cluster-dir=" + t.TempDir(), "--listen-node=0", "--listen-raft=0", "--slots=0", "--cache-memory=0"}, 8<<30)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Start(context.Background(), cfg, env, slog.New(slog.NewTextHandler(io.Discard, nil)), new(slog.LevelVar))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop(context.Background())
	node, raft := portOf(n.endpoint()), portOf(n.consensusEndpoint())
	waitRecordedAt(t, n, "127.0.0.2:"+raft, "127.0.0.2:"+node)
	moved := "127.0.0.3"
	routed.Store(&moved)
	n.followRoute()
	n.followRoute()
	if n.consensusEndpoint() != "127.0.0.3:"+raft || n.counters.raftEndpointChanges.Load() != 1 || n.counters.endpointChanges.Load() != 1 {
		t.Fatalf("after the move: consensus endpoint %s, %d consensus and %d node endpoint changes",
			n.consensusEndpoint(), n.counters.raftEndpointChanges.Load(), n.counters.endpointChanges.Load())
	}
	waitRecordedAt(t, n, "127.0.0.3:"+raft, "127.0.0.3:"+node)
}

// waitRecordedAt waits until the node's fleet records it at these endpoints.
func waitRecordedAt(t *testing.T, n *Node, raft, node string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, _ := n.cons.State().Member(n.id.NodeID)
		if m.RaftEndpoint == raft && m.NodeEndpoint == node {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fleet records %s, %s; want %s, %s", m.RaftEndpoint, m.NodeEndpoint, raft, node)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitRegisteredAt waits until every registration the scheduler holds names endpoint.
func waitRegisteredAt(t *testing.T, n *Node, endpoint string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rows := n.sched.Snapshot().Workers
		all := len(rows) > 0
		for _, w := range rows {
			all = all && w.Endpoint == endpoint
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("registrations %+v, want all at %s", rows, endpoint)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFormerEndpointsKeepTheLastMovesAndForgetOneMovedBackTo(t *testing.T) {
	var f formerEndpoints
	t0 := time.Unix(1_800_000_000, 0)
	f.moved("a:1", "b:1", t0)
	f.moved("b:1", "c:1", t0.Add(time.Minute))
	if at, ok := f.movedFrom("a:1"); !ok || !at.Equal(t0) {
		t.Fatalf("a:1 moved at %v, %v", at, ok)
	}
	f.moved("c:1", "a:1", t0.Add(2*time.Minute)) // back where it was: a:1 is current again
	if _, ok := f.movedFrom("a:1"); ok {
		t.Fatal("the current endpoint is listed as a former one")
	}
	for i := range formerEndpointsKept + 3 {
		f.moved(fmt.Sprintf("x:%d", i), fmt.Sprintf("x:%d", i+1), t0.Add(time.Duration(i)*time.Hour))
	}
	if _, ok := f.movedFrom("x:0"); ok {
		t.Error("the oldest move outlived the last", formerEndpointsKept)
	}
	if _, ok := f.movedFrom(fmt.Sprintf("x:%d", formerEndpointsKept+2)); !ok {
		t.Error("the latest move is forgotten")
	}
}
