// Package raftnet carries pace's Raft messages between members over consensus links
// (pace-consensus §7.3, peerlink): it is the consensus.Transport of a node that is one of
// several.
//
// Who dials whom: a voter dials the voters it has messages for, one link per peer, on which
// only it sends (VoterToVoter); the peer answers on its own link the other way. A learner (and
// a node pending admission) opens no consensus port: it dials every voter (LearnerToVoter) and
// both ends send on that one link, so a voter reaches a learner only on the link the learner
// made. A message for a member with no link it can use is dropped and counted
// (pace_raft_sends_dropped_no_session_total): Raft sends it again. A newer inbound link from
// the same member supersedes the older one (pace_raft_inbound_sessions_superseded_total).
//
// Moves (pace-consensus §7.4): a link dialled to an endpoint the fleet no longer records for its
// peer is dropped and the recorded one dialled, and Reconnect ends every link of a node whose
// own address moved, so they are made again from where it is now.
//
// Every message received is checked by peerlink (tag, roster, the sender the Raft message
// names) before it reaches the node; what the roster no longer holds ends its links at their
// next message, and Maintain ends idle ones within a second.
package raftnet

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink/peerconn"
)

// Node is the consensus node messages go to (consensus.Node).
type Node interface {
	Step(ctx context.Context, m *pb.Message) error
	ReportUnreachable(raftID uint64)
	ReportSnapshot(raftID uint64, status raft.SnapshotStatus)
}

// Peers is what the transport knows of the fleet: the members with their seats and consensus
// endpoints, and whether this node dials every voter (a learner, or a node pending admission).
type Peers interface {
	MemberByRaftID(raftID uint64) (fleet.Member, bool)
	Members() []fleet.Member
	DialsVoters() bool
}

// Config configures a Transport.
type Config struct {
	Self     string // this member's id
	Endpoint *peerconn.Endpoint
	Peers    func() Peers // asked afresh each time: the applied state, or a bootstrap roster
	Node     Node
	// OnAccepted is told of every link this node dialled and the peer accepted (a node
	// pending admission learns it was admitted); nil ignores them.
	OnAccepted func(peer string)
	Counters   *Counters
	Logger     *slog.Logger
	// DialTimeout bounds a TCP connect (5 s); QueueLen is each peer's outgoing queue (1024).
	DialTimeout time.Duration
	QueueLen    int
	// MaxInbound caps concurrent inbound links (256); more are refused, counted full.
	MaxInbound int
	// Listen binds the consensus port. Maintain holds it open while this node is dialled (a
	// voter, a cluster of one) and closed while it dials every voter (a learner opens no
	// port); nil never listens.
	Listen func() (net.Listener, error)
}

// Transport is one node's consensus links. Its methods are safe for concurrent use.
type Transport struct {
	cfg   Config
	log   *slog.Logger
	ctx   context.Context
	stop  context.CancelFunc
	slots chan struct{}

	mu    sync.Mutex
	peers map[string]*peer
	lns   map[net.Listener]bool
	wg    sync.WaitGroup

	ln net.Listener // Maintain's own listener, owned by its goroutine
}

// New returns a Transport; Close stops it.
func New(cfg Config) *Transport {
	cfg = cfg.withDefaults()
	ctx, stop := context.WithCancel(context.Background())
	return &Transport{cfg: cfg, log: cfg.Logger.With("component", "raftnet"), ctx: ctx, stop: stop,
		slots: make(chan struct{}, cfg.MaxInbound), peers: map[string]*peer{}, lns: map[net.Listener]bool{}}
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Counters == nil {
		c.Counters = &Counters{}
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 5 * time.Second
	}
	if c.QueueLen <= 0 {
		c.QueueLen = 1024
	}
	if c.MaxInbound <= 0 {
		c.MaxInbound = 256
	}
	return c
}

// Send queues each message for its member (consensus.Transport). It never blocks: a full
// queue, or a member with no link it can use, drops the message.
func (t *Transport) Send(msgs []*pb.Message) {
	peers := t.cfg.Peers()
	for _, m := range msgs {
		member, ok := peers.MemberByRaftID(m.GetTo())
		if !ok || member.ID == t.cfg.Self {
			t.dropped(m)
			continue
		}
		t.peerFor(member.ID).enqueue(m)
	}
}

// dropped counts a message nothing can carry and tells Raft so.
func (t *Transport) dropped(m *pb.Message) {
	t.cfg.Counters.SendsDroppedNoSession.Add(1)
	go t.cfg.Node.ReportUnreachable(m.GetTo())
	if m.GetType() == pb.MsgSnap {
		go t.cfg.Node.ReportSnapshot(m.GetTo(), raft.SnapshotFailure)
	}
}

// peerFor is id's peer state, made on first use.
func (t *Transport) peerFor(id string) *peer {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.peers[id]; ok {
		return p
	}
	p := newPeer(t, id)
	t.peers[id] = p
	t.wg.Add(1)
	go func() { defer t.wg.Done(); p.sendLoop() }()
	return p
}

// Close ends every link and listener and waits for the transport's goroutines.
func (t *Transport) Close() {
	t.stop()
	t.mu.Lock()
	for ln := range t.lns {
		ln.Close()
	}
	for _, p := range t.peers {
		p.closeLinks()
	}
	t.mu.Unlock()
	t.wg.Wait()
}

// Reconnect ends every link, dialled or accepted, so each is made again: the links this node
// dials are dialled afresh at its next message, from the address this machine now routes from,
// and its peers dial it again where the fleet records it (pace-consensus §7.4). A node whose
// address moved calls it: a connection made from the old address leads nowhere any more.
func (t *Transport) Reconnect() {
	t.mu.Lock()
	peers := make([]*peer, 0, len(t.peers))
	for _, p := range t.peers {
		peers = append(peers, p)
	}
	t.mu.Unlock()
	for _, p := range peers {
		p.closeLinks()
		p.mu.Lock()
		p.redial, p.nextDial = 0, time.Time{} // no wait left over from dials made before the move
		p.mu.Unlock()
	}
}

// Serve accepts consensus links on ln until ln closes or the transport stops.
func (t *Transport) Serve(ln net.Listener) {
	t.mu.Lock()
	t.lns[ln] = true
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.lns, ln)
		t.mu.Unlock()
	}()
	for {
		raw, err := ln.Accept()
		if err != nil {
			return
		}
		select {
		case t.slots <- struct{}{}:
		default:
			t.cfg.Endpoint.RefuseFull(raw)
			continue
		}
		t.wg.Add(1)
		go func() { defer t.wg.Done(); t.accept(raw) }()
	}
}

// accept proves one inbound link and reads it until it ends.
func (t *Transport) accept(raw net.Conn) {
	defer func() { <-t.slots }()
	c, err := t.cfg.Endpoint.Accept(t.ctx, raw)
	if err != nil {
		return // counted and logged by peerconn
	}
	p := t.peerFor(c.Peer().ID)
	if old := p.setInbound(c); old != nil {
		t.cfg.Counters.InboundSessionsSuperseded.Add(1)
		old.Close()
	}
	t.read(p, c)
	p.dropInbound(c)
}

// read steps every message of c into the node until the link ends.
func (t *Transport) read(p *peer, c *peerconn.Conn) {
	for {
		b, err := c.ReadMessage()
		if err != nil {
			if !errors.Is(err, peerconn.ErrClosed) || c.Err() == nil {
				t.log.Debug("consensus link ended", "peer", p.id, "err", err)
			}
			return
		}
		m := &pb.Message{}
		if err := proto.Unmarshal(b, m); err != nil {
			c.Close()
			return
		}
		if err := t.cfg.Node.Step(t.ctx, m); err != nil && t.ctx.Err() == nil {
			t.log.Debug("a message was not stepped", "peer", p.id, "err", err)
		}
	}
}

// CheckSender is the peerlink.SenderCheck of consensus: the Raft message a link carries must
// name the member the link proved as its sender.
func CheckSender(peer string, message []byte) error {
	m := &pb.Message{}
	if err := proto.Unmarshal(message, m); err != nil {
		return errors.Join(peerlink.ErrFrameUnreadable, err)
	}
	if m.GetFrom() != fleet.RaftID(peer) {
		return errors.New("the message names another member as its sender")
	}
	return nil
}
