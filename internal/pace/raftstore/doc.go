// Package raftstore is pace's Raft storage: a go.etcd.io/raft/v3 Storage
// persisted in one bbolt file, <state dir>/raft.db.
//
// The Raft hard state, log and snapshot (pace-node §7.2) are three buckets of
// that one file, so one
// Ready — HardState, new entries (truncating a conflicting suffix) and a
// snapshot — is written by Save in ONE bbolt transaction, fsynced on commit.
// A crash leaves either the whole Ready or none of it.
//
// Every record carries a CRC-32C and an entry its own index, so a torn or
// edited file is refused at Open (ErrCorrupt, naming the path) rather than
// replayed. The file is held exclusively through bbolt's flock; a second
// process is refused after a timeout with ErrLocked, naming the path.
//
// The store keeps only its bounds in memory (HardState, first and last
// index, snapshot metadata), each replaced only after the transaction that
// wrote it commits, so the cache never runs ahead of the disk.
package raftstore
