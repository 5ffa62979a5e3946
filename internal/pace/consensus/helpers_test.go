package consensus

import (
	"context"
	"crypto/ed25519"
	"io"
	"log/slog"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/buildfleet/buildfleet/internal/pace/clocktest"
)

// testKey is a deterministic identity key per index.
func testKey(i byte) ed25519.PublicKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0], seed[1] = i, 0x5a
	return ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
}

func newFakeClock() *clocktest.Clock { return clocktest.New(time.Unix(1_800_000_000, 0)) }

// testNode is a node under a test's control: ticks are sent by the test.
type testNode struct {
	*Node
	cfg   Config
	ticks chan time.Time
}

func testConfig(_ testing.TB, dir, id string, key byte) Config {
	return Config{
		StateDir:     dir,
		NodeID:       id,
		PublicKey:    testKey(key),
		RaftEndpoint: "127.0.0.1:6680",
		NodeEndpoint: "127.0.0.1:6674",
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		LockTimeout:  200 * time.Millisecond,
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// openNode opens cfg with a tick channel the test drives; the node is
// stopped at cleanup.
func openNode(t *testing.T, cfg Config) *testNode {
	t.Helper()
	ticks := make(chan time.Time)
	cfg.Ticks = ticks
	n, err := Open(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return &testNode{Node: n, cfg: cfg, ticks: ticks}
}

// barrier waits until the loop has handled everything queued before it,
// including every Ready that followed.
func (n *testNode) barrier(t *testing.T) {
	t.Helper()
	if err := n.call(ctxT(t), func() {}); err != nil {
		t.Fatal(err)
	}
}

// tick delivers k ticks, each fully handled before the next.
func (n *testNode) tick(t *testing.T, k int) {
	t.Helper()
	for range k {
		select {
		case n.ticks <- time.Time{}:
		case <-ctxT(t).Done():
			t.Fatal("tick not taken")
		}
		n.barrier(t)
	}
}

func heartbeatTo(id uint64) *pb.Message {
	return &pb.Message{Type: pb.MsgHeartbeat.Enum(), To: new(id), From: new(uint64(99)), Term: new(uint64(1))}
}

// openBenchNode opens a cluster of one on its own ticker.
func openBenchNode(b *testing.B) *Node {
	b.Helper()
	n, err := Open(b.Context(), testConfig(b, b.TempDir(), "n1", 1))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(n.Stop)
	return n
}
