package consensus

import (
	"fmt"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/raftstore"
)

// Founding log positions: the snapshot that carries the founding
// ConfState, and the entry that carries the Found command.
const (
	foundingSnapshotIndex = 1
	foundingEntryIndex    = 2
	foundingTerm          = 1
)

// found writes the founding Ready in one transaction: a snapshot at index
// 1 (an unfounded fleet state; ConfState voters = [this node]), entry 2 =
// Found{cluster id, this node, its endpoints and key}, and a HardState
// committing it. This is the bootstrap raft recommends (a storage whose
// first index is past 1 and whose InitialState holds the ConfState) rather
// than RawNode.Bootstrap: nothing of it lives only in memory, so a crash at
// any point leaves either an empty store (founded again, with the cluster
// id the formation record already holds) or a founded one.
func found(cfg Config, store *raftstore.Store, clusterID string) error {
	cmd := fleet.Found{
		ClusterID:    clusterID,
		ID:           cfg.NodeID,
		RaftEndpoint: cfg.RaftEndpoint,
		NodeEndpoint: cfg.NodeEndpoint,
		Key:          cfg.PublicKey,
	}
	if _, err := fleet.Apply(fleet.New(), cmd); err != nil {
		return fmt.Errorf("consensus: founding cluster %s: %w", clusterID, err)
	}
	snap := &pb.Snapshot{
		Data: fleet.EncodeSnapshot(fleet.New()),
		Metadata: &pb.SnapshotMetadata{
			Index:     new(uint64(foundingSnapshotIndex)),
			Term:      new(uint64(foundingTerm)),
			ConfState: pb.EnsureConfState(&pb.ConfState{Voters: []uint64{fleet.RaftID(cfg.NodeID)}}),
		},
	}
	entry := &pb.Entry{
		Index: new(uint64(foundingEntryIndex)),
		Term:  new(uint64(foundingTerm)),
		Type:  pb.EntryNormal.Enum(),
		Data:  encodeEnvelope(0, cmd),
	}
	hs := &pb.HardState{Term: new(uint64(foundingTerm)), Vote: new(uint64(0)), Commit: new(uint64(foundingEntryIndex))}
	if err := store.Save(hs, []*pb.Entry{entry}, snap); err != nil {
		return fmt.Errorf("consensus: founding cluster %s: %w", clusterID, err)
	}
	cfg.Logger.Info("consensus: founded a cluster of one", "cluster", clusterID, "node", cfg.NodeID, "raft_id", fmt.Sprintf("%x", fleet.RaftID(cfg.NodeID)))
	return nil
}
