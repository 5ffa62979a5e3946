package raftnet

import (
	"context"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink/peerconn"
)

// Redial pacing after a dial that failed.
const (
	minRedial = 100 * time.Millisecond
	maxRedial = 5 * time.Second
)

// peer is one other member: its outgoing queue and its links.
type peer struct {
	t  *Transport
	id string
	q  chan *pb.Message // a nil entry asks for a link without a message (a learner's dial)

	mu       sync.Mutex
	out      *peerconn.Conn // dialled by this node
	outAddr  string         // the endpoint out was dialled at
	in       *peerconn.Conn // accepted from the peer
	redial   time.Duration
	nextDial time.Time
}

func newPeer(t *Transport, id string) *peer {
	return &peer{t: t, id: id, q: make(chan *pb.Message, t.cfg.QueueLen)}
}

func (p *peer) enqueue(m *pb.Message) {
	select {
	case p.q <- m:
	default:
		if m != nil {
			p.t.dropped(m)
		}
	}
}

func (p *peer) sendLoop() {
	for {
		select {
		case <-p.t.ctx.Done():
			return
		case m := <-p.q:
			p.send(m)
		}
	}
}

// send writes m on the link this node may use for the peer, dialling one if it may.
func (p *peer) send(m *pb.Message) {
	c := p.link()
	if m == nil {
		return
	}
	if c == nil {
		p.t.dropped(m)
		return
	}
	b, err := proto.Marshal(m)
	if err == nil {
		err = c.WriteMessage(b)
	}
	if err != nil {
		p.forget(c)
		p.t.dropped(m)
		return
	}
	if m.GetType() == pb.MsgSnap {
		go p.t.cfg.Node.ReportSnapshot(m.GetTo(), raft.SnapshotFinish)
	}
}

// link is the link to send on: this node's own when it dials the peer (every voter for a
// learner; voters it has messages for, for a voter), else the two-way link the peer (a
// learner) opened. A link dialled to an endpoint the fleet no longer records for the peer is
// closed and the recorded one dialled (pace-consensus §7.4): the peer moved, and the old link,
// however healthy it looks from here, may lead nowhere.
func (p *peer) link() *peerconn.Conn {
	peers := p.t.cfg.Peers()
	m, known := memberNamed(peers, p.id)
	dialler := known && m.Seat == fleet.Voter && m.RaftEndpoint != ""
	p.mu.Lock()
	c, in, at := p.out, p.in, p.outAddr
	p.mu.Unlock()
	if c != nil && dialler && at != m.RaftEndpoint {
		p.t.log.Info("a member's consensus endpoint moved: dialling it at the new one", "peer", p.id, "from", at, "to", m.RaftEndpoint)
		p.forget(c)
		c = nil
	}
	switch {
	case c != nil:
		return c
	case in != nil && in.Direction().TwoWay():
		return in // a learner's link, still up after its promotion until it ends
	case dialler:
		return p.dial(m.RaftEndpoint, peers.DialsVoters())
	}
	return nil
}

func memberNamed(peers Peers, id string) (fleet.Member, bool) {
	return peers.MemberByRaftID(fleet.RaftID(id))
}

// dial opens this node's link to the peer at addr, unless a recent failure says wait.
func (p *peer) dial(addr string, learner bool) *peerconn.Conn {
	p.mu.Lock()
	wait := time.Now().Before(p.nextDial)
	p.mu.Unlock()
	if wait {
		return nil
	}
	dir := peerlink.VoterToVoter
	if learner {
		dir = peerlink.LearnerToVoter
	}
	c, err := p.connect(addr, dir)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.t.cfg.Counters.DialsFailed.Add(1)
		p.redial = min(max(p.redial*2, minRedial), maxRedial)
		p.nextDial = time.Now().Add(p.redial)
		return nil
	}
	p.t.cfg.Counters.Dials.Add(1)
	p.redial, p.out, p.outAddr = 0, c, addr
	if dir.TwoWay() {
		p.t.wg.Add(1)
		go func() { defer p.t.wg.Done(); p.t.read(p, c); p.forget(c) }()
	}
	if f := p.t.cfg.OnAccepted; f != nil {
		go f(p.id)
	}
	return c
}

func (p *peer) connect(addr string, dir peerlink.Direction) (*peerconn.Conn, error) {
	ctx, cancel := context.WithTimeout(p.t.ctx, p.t.cfg.DialTimeout)
	defer cancel()
	return p.t.cfg.Endpoint.DialTCP(ctx, addr, p.id, dir)
}

// forget drops c if it is still one of the peer's links, closing it.
func (p *peer) forget(c *peerconn.Conn) {
	p.mu.Lock()
	if p.out == c {
		p.out = nil
	}
	if p.in == c {
		p.in = nil
	}
	p.mu.Unlock()
	c.Close()
}

// setInbound records a newly accepted link and returns the one it supersedes.
func (p *peer) setInbound(c *peerconn.Conn) (old *peerconn.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old, p.in = p.in, c
	return old
}

func (p *peer) dropInbound(c *peerconn.Conn) {
	p.mu.Lock()
	if p.in == c {
		p.in = nil
	}
	p.mu.Unlock()
	c.Close()
}

// links are the peer's open links.
func (p *peer) links() []*peerconn.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*peerconn.Conn
	for _, c := range []*peerconn.Conn{p.out, p.in} {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

func (p *peer) closeLinks() {
	for _, c := range p.links() {
		p.forget(c)
	}
}
