// Package consensus runs pace's Raft: a go.etcd.io/raft/v3 RawNode loop over a
// raftstore.Store, applying committed entries to the fleet state machine
// (pace-node §1.2, pace-consensus §7.1, pace-consensus §7.5,
// pace-consensus §7.6).
//
// Open reads the formation record in the state directory, which decides
// the mode. A first start (no record) mints a cluster id, records the mode
// solitary and founds a cluster of one in ONE fsynced transaction: a
// snapshot at index 1 whose ConfState has this node as its only voter, and
// entry 2, the fleet's Found command naming this node and its key,
// committed. Every later start recovers HardState, log and snapshot from
// raft.db and replays them into the fleet state; it never bootstraps again.
//
// The loop handles each Ready in order: persist it (raftstore.Save, one
// transaction) → hand its messages to the Transport → apply committed
// entries (normal entries are fleet commands; conf change entries carry the
// fleet command whose seat change they make, and are applied to the fleet
// and to the RawNode together) → Advance. Every SnapshotEvery applied
// entries it snapshots the fleet state and compacts the log.
//
// Raft node ids are fleet.RaftID(member id). The Transport is the seam the
// authenticated peer transport plugs into; a cluster of one uses
// NoTransport.
package consensus
