package node

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"sync/atomic"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink/peerconn"
	"github.com/buildfleet/buildfleet/internal/pace/raftnet"
)

// links are the node's consensus links (pace-consensus §7.3): the authenticated endpoint, the
// transport that carries Raft over it, and the consensus node it steps into. The node is set
// once Open returns; messages that arrive before find nobody.
type links struct {
	n         *Node
	endpoint  *peerconn.Endpoint
	transport *raftnet.Transport
	fleet     raftnet.Fleet
	cons      atomic.Pointer[consensus.Node]
	counters  peerlink.Counters
	net       raftnet.Counters
	// first is the consensus listener bound at start (nil for a learner); later binds reuse
	// its address, so a port the kernel chose stays the recorded one.
	first atomic.Pointer[net.Listener]
}

// openLinks builds the links; consensus.Open gets their transport.
func (n *Node) openLinks() error {
	l := &links{n: n}
	if n.raftLn != nil {
		l.first.Store(&n.raftLn)
	}
	l.fleet = raftnet.Fleet{State: l.state, Bootstrap: n.bootstrapRoster, Learner: l.dialsVoters}
	ep, err := peerconn.NewEndpoint(peerconn.Config{Member: &peerlink.Member{ID: n.id.NodeID, Key: n.id.Key,
		Roster: l.fleet, Random: rand.Reader, CheckSender: raftnet.CheckSender}, Counters: &l.counters, Logger: n.log})
	if err != nil {
		return err
	}
	l.endpoint = ep
	l.transport = raftnet.New(raftnet.Config{Self: n.id.NodeID, Endpoint: ep, Peers: func() raftnet.Peers { return l.fleet },
		Node: l, OnAccepted: n.linkAccepted, Counters: &l.net, Logger: n.log, Listen: l.listen})
	n.links = l
	return nil
}

// state is the applied fleet state as the links see it: empty while consensus is still
// opening, and while the node is pending admission (its own cluster of one has nobody to
// link to; the fleet it asks is the bootstrap roster's).
func (l *links) state() *fleet.State {
	if c := l.cons.Load(); c != nil && c.Status().Mode != consensus.Pending {
		return c.State()
	}
	return fleet.New()
}

// dialsVoters: a learner, and a node asking a fleet to admit it, dial every voter.
func (l *links) dialsVoters() bool {
	c := l.cons.Load()
	if c == nil {
		return false
	}
	m := c.Status().Mode
	return m == consensus.Learner || m == consensus.Pending
}

// listen binds the consensus port: the listener bound at start the first time, the same
// address afterwards (a learner promoted to voter binds --listen-raft then).
func (l *links) listen() (net.Listener, error) {
	if first := l.first.Swap(nil); first != nil {
		return *first, nil
	}
	if l.n.raftBound != "" {
		return net.Listen("tcp", l.n.raftBound)
	}
	bind, err := parseListen("listen-raft", l.n.plan.Cfg.ListenRaft, "0.0.0.0")
	if err != nil || bind == "" {
		return nil, errors.Join(errors.New("no consensus port to bind (--listen-raft is empty)"), err)
	}
	ln, err := net.Listen("tcp", bind)
	if err == nil {
		l.n.raftBound = ln.Addr().String()
	}
	return ln, err
}

// Step, ReportUnreachable and ReportSnapshot hand the transport's news to consensus.
func (l *links) Step(ctx context.Context, m *pb.Message) error {
	if c := l.cons.Load(); c != nil {
		return c.Step(ctx, m)
	}
	return errors.New("consensus is still opening")
}

func (l *links) ReportUnreachable(id uint64) {
	if c := l.cons.Load(); c != nil {
		c.ReportUnreachable(id)
	}
}

func (l *links) ReportSnapshot(id uint64, s raft.SnapshotStatus) {
	if c := l.cons.Load(); c != nil {
		c.ReportSnapshot(id, s)
	}
}
