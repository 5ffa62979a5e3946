package consensus

import (
	"context"
	"sync"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// memNet is an in-memory network for tests: one ordered link per
// (sender, receiver) pair, messages copied as if serialized, and a switch
// to cut a node off. It stands where the authenticated peer transport
// will.
type memNet struct {
	mu    sync.Mutex
	nodes map[uint64]*Node
	cut   map[uint64]bool
	links map[[2]uint64]chan *pb.Message
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newMemNet() *memNet {
	return &memNet{nodes: map[uint64]*Node{}, cut: map[uint64]bool{}, links: map[[2]uint64]chan *pb.Message{}, stop: make(chan struct{})}
}

func (m *memNet) attach(n *Node) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nodes[n.id] = n
}

func (m *memNet) setCut(id uint64, cut bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cut[id] = cut
}

func (m *memNet) close() {
	close(m.stop)
	m.wg.Wait()
}

// transport is the Transport of the node with raft id from.
func (m *memNet) transport(from uint64) Transport { return memTransport{net: m, from: from} }

type memTransport struct {
	net  *memNet
	from uint64
}

// Send queues each message on its link; a full link drops it, as a
// congested network would.
func (t memTransport) Send(msgs []*pb.Message) {
	for _, msg := range msgs {
		link := t.net.link(t.from, msg.GetTo())
		select {
		case link <- proto.Clone(msg).(*pb.Message):
		default:
		}
	}
}

func (m *memNet) link(from, to uint64) chan *pb.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]uint64{from, to}
	if l, ok := m.links[key]; ok {
		return l
	}
	l := make(chan *pb.Message, 1024)
	m.links[key] = l
	m.wg.Add(1)
	go m.deliver(from, to, l)
	return l
}

// deliver steps a link's messages into the receiver in order, reporting
// unreachable peers and snapshot outcomes to the sender.
func (m *memNet) deliver(from, to uint64, l chan *pb.Message) {
	defer m.wg.Done()
	for {
		select {
		case <-m.stop:
			return
		case msg := <-l:
			m.mu.Lock()
			sender, receiver, cut := m.nodes[from], m.nodes[to], m.cut[from] || m.cut[to]
			m.mu.Unlock()
			err := context.Canceled
			if receiver != nil && !cut {
				err = receiver.Step(context.Background(), msg)
			}
			if sender == nil {
				continue
			}
			if err != nil {
				go sender.ReportUnreachable(to)
			}
			if msg.GetType() == pb.MsgSnap {
				status := raft.SnapshotFinish
				if err != nil {
					status = raft.SnapshotFailure
				}
				go sender.ReportSnapshot(to, status)
			}
		}
	}
}
