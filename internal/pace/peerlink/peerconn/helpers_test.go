package peerconn

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
)

// testTimeout bounds every wait so that a bug hangs nothing; it is a
// safety net, never the thing asserted.
const testTimeout = 10 * time.Second

// Test world: voters v1, v2, v3, learner l1; r1 was forgotten; a stranger
// holds a key nobody records.
var (
	v1Key       = leasetest.NewSigner("v1")
	v2Key       = leasetest.NewSigner("v2")
	v3Key       = leasetest.NewSigner("v3")
	l1Key       = leasetest.NewSigner("l1")
	r1Key       = leasetest.NewSigner("r1")
	strangerKey = leasetest.NewSigner("stranger")
)

func newRoster() *leasetest.Roster {
	return leasetest.NewRoster("c1").
		AddVoter("v1", v1Key.Public()).
		AddVoter("v2", v2Key.Public()).
		AddVoter("v3", v3Key.Public()).
		AddLearner("l1", l1Key.Public()).
		AddLearner("r1", r1Key.Public()).
		Forget("r1")
}

// syncBuffer collects log lines from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// node is one member's endpoint with its own counters and log.
type node struct {
	member   *peerlink.Member
	roster   *leasetest.Roster
	counters *peerlink.Counters
	logs     *syncBuffer
	ep       *Endpoint
}

func newNode(t testing.TB, id string, key peerlink.Signer, r *leasetest.Roster, tweak ...func(*Config)) *node {
	t.Helper()
	n := &node{roster: r, counters: &peerlink.Counters{}, logs: &syncBuffer{}}
	n.member = &peerlink.Member{ID: id, Key: key, Roster: peerlink.FromLease(r), Random: rand.Reader}
	cfg := Config{Member: n.member, Counters: n.counters, Logger: slog.New(slog.NewTextHandler(n.logs, nil))}
	for _, f := range tweak {
		f(&cfg)
	}
	ep, err := NewEndpoint(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.ep = ep
	return n
}

// counts is the node's non-zero counters, names without the prefix.
func (n *node) counts() map[string]uint64 {
	m := map[string]uint64{}
	for _, metric := range n.counters.Metrics() {
		if v := metric.Value.Load(); v != 0 {
			m[metric.Name[len("pace_raft_peer_"):]] = v
		}
	}
	return m
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// result is both ends of one connection attempt.
type result struct {
	accepted, dialled  *Conn
	acceptErr, dialErr error
}

// connect runs acc's Accept and dial's Dial on the two ends of conns.
func connect(t testing.TB, acc, dial *node, target string, dir peerlink.Direction, a, b net.Conn) result {
	t.Helper()
	var r result
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.accepted, r.acceptErr = acc.ep.Accept(testContext(t), a)
	}()
	r.dialled, r.dialErr = dial.ep.Dial(testContext(t), b, target, dir)
	<-done
	t.Cleanup(func() {
		for _, c := range []*Conn{r.accepted, r.dialled} {
			if c != nil {
				c.Close()
			}
		}
	})
	return r
}

// overPipe connects over an in-memory pipe.
func overPipe(t testing.TB, acc, dial *node, target string, dir peerlink.Direction) result {
	a, b := net.Pipe()
	return connect(t, acc, dial, target, dir, a, b)
}

// overTCP connects over loopback TCP.
func overTCP(t testing.TB, acc, dial *node, target string, dir peerlink.Direction) result {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	b, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, acc, dial, target, dir, a, b)
}

// pair is the usual link: l1 dialling v1 for a two-way learner session.
func pair(t testing.TB, tweak ...func(*Config)) (acc, dial *node, r result) {
	t.Helper()
	roster := newRoster()
	acc = newNode(t, "v1", v1Key, roster, tweak...)
	dial = newNode(t, "l1", l1Key, roster, tweak...)
	r = overPipe(t, acc, dial, "v1", peerlink.LearnerToVoter)
	if r.acceptErr != nil || r.dialErr != nil {
		t.Fatalf("handshake: %v / %v", r.acceptErr, r.dialErr)
	}
	return acc, dial, r
}

// readAsync reads one message from c in the background.
func readAsync(c *Conn) <-chan readResult {
	ch := make(chan readResult, 1)
	go func() {
		msg, err := c.ReadMessage()
		ch <- readResult{msg, err}
	}()
	return ch
}

type readResult struct {
	msg []byte
	err error
}

func await(t testing.TB, ch <-chan readResult) readResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(testTimeout):
		t.Fatal("no read finished")
		return readResult{}
	}
}
