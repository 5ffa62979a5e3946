package consensus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/buildfleet/buildfleet/internal/pace/raftstore"
)

// ArchiveDir holds the Raft stores of the clusters this node dissolved, one directory per
// cluster id (pace-consensus §7.1).
const ArchiveDir = "archive"

// ErrNotJoinable: only a node still leading its own cluster of one (solitary or pending) may
// dissolve it to join another.
var ErrNotJoinable = errors.New("consensus: this node is a member of a fleet; it joins no other")

// Join dissolves this node's own cluster of one and makes it a learner of clusterID, which
// admitted it: the Raft store is archived under archive/<old cluster id>/ (the identity key and
// the node id stay), the formation record names the new cluster, and consensus restarts with
// an empty configuration, learned from the new leader's first message (a snapshot). Messages
// stepped before Join returns belonged to the old cluster. It runs on the loop.
func (n *Node) Join(ctx context.Context, clusterID string) error {
	var err error
	if cerr := n.call(ctx, func() { err = n.join(clusterID) }); cerr != nil {
		return cerr
	}
	return err
}

func (n *Node) join(clusterID string) error {
	old := n.loop.form
	if !old.Mode.founds() || n.State().Len() > 1 {
		return fmt.Errorf("%w (mode %s, %d members)", ErrNotJoinable, old.Mode, n.State().Len())
	}
	if clusterID == "" || clusterID == old.ClusterID {
		return fmt.Errorf("consensus: join: cluster %q is not another cluster", clusterID)
	}
	n.failPending()
	if err := n.store.Close(); err != nil {
		return n.joinFailed(fmt.Errorf("consensus: closing the raft store to archive it: %w", err))
	}
	if err := archiveStore(n.cfg.StateDir, old.ClusterID); err != nil {
		return n.joinFailed(err)
	}
	store, err := raftstore.Open(filepath.Join(n.cfg.StateDir, raftstore.FileName), raftstore.Options{LockTimeout: n.cfg.LockTimeout})
	if err != nil {
		return n.joinFailed(fmt.Errorf("consensus: a fresh raft store: %w", err))
	}
	n.store = store
	form := Formation{Mode: Learner, ClusterID: clusterID}
	if err := WriteFormation(n.cfg.StateDir, form); err != nil {
		return n.joinFailed(fmt.Errorf("consensus: %w", err))
	}
	n.contact.Store(0)
	if err := n.initLoop(form); err != nil {
		return n.joinFailed(err)
	}
	n.loop.caughtUp = true // nothing to replay; Open's wait was released long ago
	n.log.Info("consensus: dissolved this node's own cluster to join a fleet", "archived", old.ClusterID, "joined", clusterID)
	return nil
}

// joinFailed stops the loop: with its store half moved, the node cannot go on (a restart
// finds either the old store or the new one, with the formation record that goes with it).
func (n *Node) joinFailed(err error) error {
	n.fail(err)
	return err
}

// archiveStore moves raft.db and the formation record of cluster into archive/<cluster>/.
func archiveStore(stateDir, cluster string) error {
	dir := filepath.Join(stateDir, ArchiveDir, cluster)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("consensus: archive: %w", err)
	}
	for _, name := range []string{raftstore.FileName, FormationFile} {
		if err := os.Rename(filepath.Join(stateDir, name), filepath.Join(dir, name)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("consensus: archiving %s: %w", name, err)
		}
	}
	return nil
}

// SetPending records that this node, still leading its own cluster of one, is asking a fleet
// to admit it (asking true: solitary → pending), or that it gave up asking (pending →
// solitary). A node of a fleet is refused.
func (n *Node) SetPending(ctx context.Context, asking bool) error {
	var err error
	if cerr := n.call(ctx, func() { err = n.setPending(asking) }); cerr != nil {
		return cerr
	}
	return err
}

func (n *Node) setPending(asking bool) error {
	from, to := Solitary, Pending
	if !asking {
		from, to = Pending, Solitary
	}
	switch n.loop.form.Mode {
	case to:
		return nil
	case from:
	default:
		return fmt.Errorf("%w (mode %s)", ErrNotJoinable, n.loop.form.Mode)
	}
	next := Formation{Mode: to, ClusterID: n.loop.form.ClusterID, CreatedAt: n.loop.form.CreatedAt}
	if err := WriteFormation(n.cfg.StateDir, next); err != nil {
		return fmt.Errorf("consensus: %w", err)
	}
	n.loop.form = next
	n.publishStatus()
	return nil
}
