package raftnet

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink/peerconn"
)

// member is one consensus node with its real transport on loopback.
type member struct {
	id      string
	key     *identity.Key
	addr    string
	dir     string
	node    *consensus.Node
	tr      *Transport
	links   peerlink.Counters
	net     Counters
	stop    context.CancelFunc
	boot    []fleet.Member
	stopped bool
	bind    string    // where the consensus port binds; "" binds addr
	accepts acceptLog // the local address of every link it accepted
}

// acceptLog records where a member accepted its links.
type acceptLog struct {
	mu sync.Mutex
	at []string
}

func (l *acceptLog) has(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.at, addr)
}

// loggedListener notes the local address of every connection it accepts.
type loggedListener struct {
	net.Listener
	log *acceptLog
}

func (l loggedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.log.mu.Lock()
		l.log.at = append(l.log.at, c.LocalAddr().String())
		l.log.mu.Unlock()
	}
	return c, err
}

// listen binds the member's consensus port, logging what it accepts.
func (m *member) listen() (net.Listener, error) {
	bind := m.bind
	if bind == "" {
		bind = m.addr
	}
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	return loggedListener{ln, &m.accepts}, nil
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newMember prepares a node: its key, a loopback listener and its state directory. A
// joiner's formation is a learner of cluster with an empty store, which learns the fleet
// from the leader; boot are the voters it trusts until then.
func newMember(t *testing.T, id string) *member {
	t.Helper()
	key, err := identity.NewKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // the transport binds it while this node is dialled
	return &member{id: id, key: key, addr: ln.Addr().String(), dir: t.TempDir()}
}

func (m *member) record(seat fleet.Seat) fleet.Member {
	return fleet.Member{ID: m.id, Seat: seat, RaftEndpoint: m.addr, Key: m.key.Public()}
}

// start opens consensus and the transport, which listens while the node is dialled.
func (m *member) start(t *testing.T) {
	t.Helper()
	var node atomic.Pointer[consensus.Node]
	fl := Fleet{State: func() *fleet.State {
		if n := node.Load(); n != nil {
			return n.State()
		}
		return fleet.New() // messages sent while Open replays: nobody to send them to yet
	},
		Bootstrap: func() []fleet.Member { return m.boot },
		Learner:   func() bool { n := node.Load(); return n != nil && n.Status().Mode == consensus.Learner }}
	ep, err := peerconn.NewEndpoint(peerconn.Config{Member: &peerlink.Member{ID: m.id, Key: m.key, Roster: fl,
		Random: rand.Reader, CheckSender: CheckSender}, Counters: &m.links})
	if err != nil {
		t.Fatal(err)
	}
	m.tr = New(Config{Self: m.id, Endpoint: ep, Peers: func() Peers { return fl }, Counters: &m.net,
		Listen: m.listen,
		Node:   nodeRef{node.Load}})
	opened, err := consensus.Open(ctxT(t), consensus.Config{StateDir: m.dir, NodeID: m.id, PublicKey: m.key.Public(),
		RaftEndpoint: m.addr, NodeEndpoint: m.addr, Transport: m.tr, TickInterval: 10 * time.Millisecond, ElectionTicks: 20})
	if err != nil {
		t.Fatal(err)
	}
	node.Store(opened)
	m.node = opened
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	go m.tr.Maintain(ctx)
	t.Cleanup(m.halt)
}

// halt stops the node as a crash would look to the others: links closed, no goodbye.
func (m *member) halt() {
	if m.stopped {
		return
	}
	m.stopped = true
	m.stop()
	m.tr.Close()
	m.node.Stop()
}

// nodeRef hands the transport the node once it exists (the transport is made first).
type nodeRef struct{ get func() *consensus.Node }

func (r nodeRef) Step(ctx context.Context, msg *pb.Message) error { return r.get().Step(ctx, msg) }
func (r nodeRef) ReportUnreachable(id uint64)                     { r.get().ReportUnreachable(id) }
func (r nodeRef) ReportSnapshot(id uint64, s raft.SnapshotStatus) { r.get().ReportSnapshot(id, s) }

// joiner prepares a node that joins the founder's cluster as a learner.
func joiner(t *testing.T, id string, founder *member) *member {
	t.Helper()
	m := newMember(t, id)
	if err := consensus.WriteFormation(m.dir, consensus.Formation{Mode: consensus.Learner, ClusterID: founder.node.State().ClusterID()}); err != nil {
		t.Fatal(err)
	}
	m.boot = []fleet.Member{founder.record(fleet.Voter)}
	return m
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// propose proposes on whichever member leads, again when leadership moved meanwhile.
func propose(t *testing.T, cmd fleet.Command, ms ...*member) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range ms {
			if m.stopped || !m.node.IsLeader() {
				continue
			}
			err := m.node.Propose(ctxT(t), cmd)
			switch {
			case err == nil:
				return
			case errors.Is(err, consensus.ErrNotLeader), errors.Is(err, consensus.ErrProposalLost), errors.Is(err, consensus.ErrProposalDropped),
				errors.Is(err, consensus.ErrUnsafeChange), errors.Is(err, consensus.ErrMembershipBusy):
			default:
				t.Fatalf("Propose(%#v): %v", cmd, err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nobody committed %#v", cmd)
}

// linksTo lists the live links this transport holds with member id.
func (t *Transport) linksTo(id string) []*peerconn.Conn {
	t.mu.Lock()
	p, ok := t.peers[id]
	t.mu.Unlock()
	if !ok {
		return nil
	}
	return p.links()
}
