package node

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// TestAnAutoEndpointFollowsTheRoute starts a real node whose node port binds every address,
// moves the address this machine "routes from", and checks the node advertises the new
// endpoint, counts the move, and re-registers its worker under it with nothing left under the
// old one.
func TestAnAutoEndpointFollowsTheRoute(t *testing.T) {
	var routed atomic.Pointer[string]
	first := "127.0.0.2"
	routed.Store(&first)
	env := Env{RoutedFrom: func() (string, error) { return *routed.Load(), nil },
		DefaultStateDir: func() (string, string, error) { return t.TempDir(), "test", nil }}
	cfg, err := Load([]string{"--cluster-dir=" + t.TempDir(), "--listen-node=0", "--listen-raft=127.0.0.1:0",
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
	moved := "127.0.0.3"
	routed.Store(&moved)
	n.rederiveAdvertise()
	if n.endpoint() != "127.0.0.3:"+port || n.counters.endpointChanges.Load() != 1 {
		t.Fatalf("after the move: advertised %s, %d changes", n.endpoint(), n.counters.endpointChanges.Load())
	}
	waitRegisteredAt(t, n, "127.0.0.3:"+port)
	n.rederiveAdvertise()
	if n.counters.endpointChanges.Load() != 1 {
		t.Fatal("an unchanged route counted as a move")
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
