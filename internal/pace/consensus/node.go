package consensus

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/raftstore"
)

// Node is one consensus member: the RawNode loop, its store and the
// applied fleet state. Its exported methods are safe for concurrent use.
type Node struct {
	cfg    Config
	id     uint64
	store  *raftstore.Store
	log    *slog.Logger
	ticker *time.Ticker

	state   atomic.Pointer[fleet.State]
	status  atomic.Pointer[Status]
	leadID  atomic.Uint64 // raft id of the leader, 0 when none is known
	contact atomic.Int64  // unix nanoseconds of the last message from the leader; 0: never
	propSeq atomic.Uint64

	props    chan *proposal
	inbox    chan *pb.Message
	calls    chan func()
	stopc    chan struct{}
	done     chan struct{}
	caughtUp chan struct{}
	stopOnce sync.Once
	failure  atomic.Pointer[error]

	loop loopState // owned by the loop goroutine
}

// Open starts consensus in cfg.StateDir: it founds a cluster of one on a
// first start, otherwise recovers what raft.db holds (see the package doc).
// It returns once the recovered log is applied and, when this node is its
// cluster's only voter, once it leads.
func Open(ctx context.Context, cfg Config) (*Node, error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	store, err := raftstore.Open(filepath.Join(cfg.StateDir, raftstore.FileName), raftstore.Options{LockTimeout: cfg.LockTimeout})
	if err != nil {
		return nil, fmt.Errorf("consensus: %w", err)
	}
	n, err := start(cfg, store)
	if err != nil {
		store.Close()
		return nil, err
	}
	if err := n.awaitReady(ctx); err != nil {
		n.Stop()
		return nil, err
	}
	if st := n.State(); st.Founded() && st.ClusterID() != n.Status().ClusterID {
		n.Stop()
		return nil, fmt.Errorf("%w: %s records cluster %s but %s holds cluster %s",
			ErrStateDir, filepath.Join(cfg.StateDir, FormationFile), n.Status().ClusterID, store.Path(), st.ClusterID())
	}
	return n, nil
}

// start settles the formation record and the store, then starts the loop.
// The store's lock is already held, so no second process races us here.
func start(cfg Config, store *raftstore.Store) (*Node, error) {
	form, err := settleFormation(cfg, store)
	if err != nil {
		return nil, err
	}
	n := &Node{
		cfg: cfg, id: fleet.RaftID(cfg.NodeID), store: store, log: cfg.Logger.With("component", "consensus"),
		props: make(chan *proposal), inbox: make(chan *pb.Message, 256), calls: make(chan func()),
		stopc: make(chan struct{}), done: make(chan struct{}), caughtUp: make(chan struct{}),
	}
	var seed [8]byte
	if _, err := io.ReadFull(cfg.Rand, seed[:]); err != nil {
		return nil, fmt.Errorf("consensus: proposal ids: %w", err)
	}
	n.propSeq.Store(binary.BigEndian.Uint64(seed[:]) >> 1) // ids stay clear of 0 for a long time
	if err := n.initLoop(form); err != nil {
		return nil, err
	}
	if cfg.Ticks == nil {
		n.ticker = time.NewTicker(cfg.TickInterval)
		n.cfg.Ticks = n.ticker.C
	}
	go n.run()
	return n, nil
}

// settleFormation reads the formation record, minting it on a first start,
// and founds the cluster when the mode founds one and the store is empty.
func settleFormation(cfg Config, store *raftstore.Store) (Formation, error) {
	form, exists, err := ReadFormation(cfg.StateDir)
	if err != nil {
		return Formation{}, fmt.Errorf("consensus: %w", err)
	}
	empty := storeIsEmpty(store)
	if !exists {
		if !empty {
			return Formation{}, fmt.Errorf("%w: %s holds a Raft log but %s has no formation record; refusing to found a second cluster over it",
				ErrStateDir, store.Path(), filepath.Join(cfg.StateDir, FormationFile))
		}
		id, err := mintClusterID(cfg.Rand)
		if err != nil {
			return Formation{}, err
		}
		form = Formation{Mode: Solitary, ClusterID: id, CreatedAt: time.Now().Unix()}
		if err := WriteFormation(cfg.StateDir, form); err != nil {
			return Formation{}, fmt.Errorf("consensus: %w", err)
		}
		cfg.Logger.Info("consensus: minted a cluster of one", "cluster", id, "node", cfg.NodeID)
	}
	if empty && form.Mode.founds() {
		if err := found(cfg, store, form.ClusterID); err != nil {
			return Formation{}, err
		}
	}
	return form, nil
}

func storeIsEmpty(store *raftstore.Store) bool {
	last, _ := store.LastIndex()
	return last == 0 && raft.IsEmptyHardState(store.HardState())
}

// awaitReady waits until the recovered log is applied and, for a cluster
// whose only voter is this node, until it leads.
func (n *Node) awaitReady(ctx context.Context) error {
	select {
	case <-n.caughtUp:
		return nil
	case <-n.done:
		return n.stoppedErr()
	case <-ctx.Done():
		return fmt.Errorf("consensus: waiting to recover and lead: %w", ctx.Err())
	}
}

// State is the fleet state applied most recently. It is immutable; every
// request asks again rather than keeping it.
func (n *Node) State() *fleet.State { return n.state.Load() }

// IsLeader reports whether this node leads its cluster.
func (n *Node) IsLeader() bool { return n.leadID.Load() == n.id }

// Leader names the leader when one is known and is in the applied state.
func (n *Node) Leader() (id string, known bool) {
	lead := n.leadID.Load()
	if lead == 0 {
		return "", false
	}
	m, ok := n.State().MemberByRaftID(lead)
	return m.ID, ok
}

// LastLeaderContact is when this node last heard its leader: now while it
// leads; for a follower or learner the arrival of the leader's last append,
// heartbeat or snapshot; the zero time when it never has (since Open). The
// lease verifier's 65-minute isolation rule reads it.
func (n *Node) LastLeaderContact() time.Time {
	if n.IsLeader() {
		return n.cfg.Now()
	}
	ns := n.contact.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// Status is the consensus view for status verbs and gauges.
func (n *Node) Status() Status {
	st := *n.status.Load()
	st.Members = slices.Clone(st.Members)
	return st
}

// Err is why the loop stopped on its own (a storage failure), or nil.
func (n *Node) Err() error {
	if p := n.failure.Load(); p != nil {
		return *p
	}
	return nil
}

// Step hands the node a message from a peer (the Transport calls it).
func (n *Node) Step(ctx context.Context, m *pb.Message) error {
	if m.GetTo() != n.id {
		return fmt.Errorf("consensus: message for raft id %x reached %x", m.GetTo(), n.id)
	}
	select {
	case <-n.done:
		return n.stoppedErr()
	default:
	}
	select {
	case n.inbox <- m:
		return nil
	case <-n.done:
		return n.stoppedErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ReportUnreachable tells Raft a peer could not be reached.
func (n *Node) ReportUnreachable(raftID uint64) {
	n.call(context.Background(), func() { n.loop.rn.ReportUnreachable(raftID) })
}

// ReportSnapshot tells Raft how sending a snapshot to a peer ended.
func (n *Node) ReportSnapshot(raftID uint64, status raft.SnapshotStatus) {
	n.call(context.Background(), func() { n.loop.rn.ReportSnapshot(raftID, status) })
}

// call runs fn on the loop goroutine and waits for it.
func (n *Node) call(ctx context.Context, fn func()) error {
	ran := make(chan struct{})
	select {
	case n.calls <- func() { fn(); close(ran) }:
	case <-n.done:
		return n.stoppedErr()
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ran:
		return nil
	case <-n.done:
		return n.stoppedErr()
	}
}

// Stop ends the loop and releases raft.db. Proposals waiting fail with
// ErrStopped. It is safe to call more than once.
func (n *Node) Stop() {
	n.stopOnce.Do(func() {
		close(n.stopc)
		<-n.done
		if n.ticker != nil {
			n.ticker.Stop()
		}
		if err := n.store.Close(); err != nil {
			n.log.Warn("consensus: closing the raft store", "err", err)
		}
	})
}

func (n *Node) stoppedErr() error {
	if err := n.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrStopped, err)
	}
	return ErrStopped
}

func (n *Node) fail(err error) {
	n.failure.CompareAndSwap(nil, &err)
	n.log.Error("consensus: loop stopped", "err", err)
}

func mintClusterID(r io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("consensus: minting a cluster id: %w", err)
	}
	return fmt.Sprintf("%x", b), nil
}
