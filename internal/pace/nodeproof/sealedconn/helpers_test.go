package sealedconn

import (
	"context"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// testTimeout bounds every wait so a bug hangs nothing; it is a safety
// net, never the thing asserted.
const testTimeout = 10 * time.Second

var (
	schedulerKey = leasetest.NewSigner("s1")
	nodeKey      = leasetest.NewSigner("n2")
	revokedKey   = leasetest.NewSigner("n3")
	strangerKey  = leasetest.NewSigner("stranger")
)

func seededRandom(seed uint64) io.Reader {
	var s [32]byte
	binary.BigEndian.PutUint64(s[:], seed)
	return rand.NewChaCha8(s)
}

// lockedReader makes a random source safe for the server's connection
// goroutines.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

func newRoster() *leasetest.Roster {
	return leasetest.NewRoster("c1").
		AddVoter("s1", schedulerKey.Public()).
		AddLearner("n2", nodeKey.Public()).
		AddLearner("n3", revokedKey.Public()).
		Revoke(revokedKey.Public())
}

// nodeHandler is the node port as far as this package goes: the proof
// verbs, HEARTBEAT as a verb that needs a proven live key (echoing its
// second field), and FETCH as an open sealed echo.
type nodeHandler struct{ proofs *nodeproof.Server }

func (h *nodeHandler) session(c *frameserver.Conn) *nodeproof.Session {
	s, ok := c.Data().(*nodeproof.Session)
	if !ok {
		s = h.proofs.NewSession()
		c.SetData(s)
	}
	return s
}

func (h *nodeHandler) Serve(_ context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	s := h.session(c)
	if req.Info.Family == wire.FamilyNodeProof {
		return ServeProof(c, s, req)
	}
	switch req.Op() {
	case wire.OpHeartbeat:
		if _, err := s.Proven(); err != nil {
			return RefuseUnproven(err)
		}
		return frameserver.Ok(req.Fields[1])
	case wire.OpFetch:
		return frameserver.Ok(req.Fields[0])
	}
	return frameserver.RefuseCode(wire.CodeUnknownOpcode)
}

// closeWatcher reports connection closes; beyond its buffer (benchmarks
// that nobody watches) it drops them rather than stall the server.
type closeWatcher struct {
	frameserver.NopObserver
	closed chan frameserver.CloseReason
}

func (w closeWatcher) ConnClosed(r frameserver.CloseReason) {
	select {
	case w.closed <- r:
	default:
	}
}

func (w closeWatcher) next(t *testing.T) frameserver.CloseReason {
	t.Helper()
	select {
	case r := <-w.closed:
		return r
	case <-time.After(testTimeout):
		t.Fatal("no connection closed")
		return 0
	}
}

// scheduler is a node port on loopback.
type scheduler struct {
	addr     string
	roster   *leasetest.Roster
	counters *nodeproof.Counters
	closes   closeWatcher
}

func startScheduler(t testing.TB) *scheduler {
	t.Helper()
	s := &scheduler{roster: newRoster(), counters: &nodeproof.Counters{},
		closes: closeWatcher{closed: make(chan frameserver.CloseReason, 64)}}
	proofs := &nodeproof.Server{ID: "s1", Key: schedulerKey, Roster: s.roster,
		Random: &lockedReader{r: seededRandom(1)}, Counters: s.counters}
	srv, err := frameserver.New(frameserver.Config{
		Handler:  &nodeHandler{proofs: proofs},
		Observer: CountSealRefusals(s.closes, s.counters),
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	s.addr = l.Addr().String()
	return s
}

func (s *scheduler) config(id string, key nodeproof.Signer) Config {
	return Config{Prover: &nodeproof.Client{ID: id, Key: key, Roster: s.roster, Random: seededRandom(2)}}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func dial(t *testing.T, addr string, cfg Config) *Conn {
	t.Helper()
	c, err := Dial(testContext(t), addr, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (s *scheduler) count(name string) uint64 {
	for _, m := range s.counters.Metrics() {
		if m.Name == name {
			return m.Value.Load()
		}
	}
	panic("no counter " + name)
}
