package raftstore

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// ErrLogGap reports entries that would leave a hole in the log.
var ErrLogGap = errors.New("raft store: entries do not follow the log")

// Save persists one Ready — a snapshot (replacing the whole log), entries
// (replacing any conflicting suffix) and the HardState — in one bbolt
// transaction, fsynced when it commits. Empty parts are skipped; a Ready
// with nothing to persist writes nothing.
func (s *Store) Save(hs *pb.HardState, entries []*pb.Entry, snap *pb.Snapshot) error {
	if raft.IsEmptyHardState(hs) && len(entries) == 0 && raft.IsEmptySnap(snap) {
		return nil
	}
	return s.update("save", func(tx *bolt.Tx, next *bounds) error {
		if !raft.IsEmptySnap(snap) {
			if err := putSnapshot(tx, next, snap, true); err != nil {
				return err
			}
		}
		if err := appendEntries(tx, next, entries); err != nil {
			return err
		}
		if !raft.IsEmptyHardState(hs) {
			next.hard = cloneHardState(hs)
			if err := tx.Bucket(bucketState).Put(keyHardState, encodeHardState(hs)); err != nil {
				return err
			}
		}
		if c := next.hard.GetCommit(); c > next.last {
			return fmt.Errorf("%w: hard state commits %d beyond the last entry %d", ErrLogGap, c, next.last)
		}
		return nil
	})
}

// ApplySnapshot replaces the log with snap, as MemoryStorage.ApplySnapshot
// does; a snapshot at index 0 (a bare ConfState) is accepted only by a store
// that holds no snapshot yet.
func (s *Store) ApplySnapshot(snap *pb.Snapshot) error {
	return s.update("apply-snapshot", func(tx *bolt.Tx, next *bounds) error {
		return putSnapshot(tx, next, pb.EnsureSnapshot(snap), true)
	})
}

// CreateSnapshot records a snapshot of the state machine at index i (which
// must be held and newer than the current snapshot) with the ConfState in
// force there. It does not compact: call Compact after.
func (s *Store) CreateSnapshot(i uint64, cs *pb.ConfState, data []byte) (*pb.Snapshot, error) {
	var out *pb.Snapshot
	err := s.update("create-snapshot", func(tx *bolt.Tx, next *bounds) error {
		if i <= next.snap.GetMetadata().GetIndex() {
			return raft.ErrSnapOutOfDate
		}
		if i > next.last {
			return fmt.Errorf("%w: snapshot at %d past last index %d", ErrOutOfBounds, i, next.last)
		}
		term, err := s.termIn(tx, *next, i)
		if err != nil {
			return err
		}
		if cs == nil {
			cs = next.snap.GetMetadata().GetConfState()
		}
		out = &pb.Snapshot{Data: data, Metadata: &pb.SnapshotMetadata{
			Index: new(i), Term: new(term), ConfState: pb.EnsureConfState(proto.Clone(cs).(*pb.ConfState)),
		}}
		return putSnapshot(tx, next, out, false)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Compact discards the entries up to and including i, keeping i's term for
// matching. As with MemoryStorage, compacting past the latest snapshot is
// the caller's choice to make: a follower that then needs those entries
// gets the older snapshot.
func (s *Store) Compact(i uint64) error {
	return s.update("compact", func(tx *bolt.Tx, next *bounds) error {
		if i <= next.logStart.index {
			return raft.ErrCompacted
		}
		if i > next.last {
			return fmt.Errorf("%w: compact to %d past last index %d", ErrOutOfBounds, i, next.last)
		}
		term, err := s.termIn(tx, *next, i)
		if err != nil {
			return err
		}
		if err := deleteFrom(tx.Bucket(bucketLog), 0, i); err != nil {
			return err
		}
		next.logStart = entryID{i, term}
		return tx.Bucket(bucketState).Put(keyLogStart, encodeLogStart(next.logStart))
	})
}

// update runs one write transaction under the write lock. The bounds are
// replaced only after the transaction commits, so memory never runs ahead
// of the disk; a failed transaction leaves both as they were.
func (s *Store) update(op string, fn func(tx *bolt.Tx, next *bounds) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.meta
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := fn(tx, &next); err != nil {
			return err
		}
		if s.fault != nil {
			return s.fault(op)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("raftstore: %s %s: %w", op, s.path, err)
	}
	s.meta = next
	return nil
}

// putSnapshot writes snap; replaceLog discards the whole log, making snap's
// position the one just before the first entry.
func putSnapshot(tx *bolt.Tx, next *bounds, snap *pb.Snapshot, replaceLog bool) error {
	idx, cur := snap.GetMetadata().GetIndex(), next.snap.GetMetadata().GetIndex()
	if cur != 0 && cur >= idx {
		return raft.ErrSnapOutOfDate
	}
	rec, err := encodeSnapshot(snap)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketSnapshot).Put(keySnapshot, rec); err != nil {
		return err
	}
	meta := proto.Clone(snap.GetMetadata()).(*pb.SnapshotMetadata)
	next.snap = pb.EnsureSnapshot(&pb.Snapshot{Metadata: meta})
	if !replaceLog {
		return nil
	}
	if err := tx.DeleteBucket(bucketLog); err != nil {
		return err
	}
	if _, err := tx.CreateBucket(bucketLog); err != nil {
		return err
	}
	next.logStart = entryID{idx, snap.GetMetadata().GetTerm()}
	next.last = idx
	return tx.Bucket(bucketState).Put(keyLogStart, encodeLogStart(next.logStart))
}

// appendEntries appends entries as MemoryStorage.Append does: entries at or
// before the log start are dropped, a suffix that conflicts is replaced.
func appendEntries(tx *bolt.Tx, next *bounds, entries []*pb.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	first := next.logStart.index + 1
	if last := entries[0].GetIndex() + uint64(len(entries)) - 1; last < first {
		return nil
	}
	if at := entries[0].GetIndex(); at < first {
		entries = entries[first-at:]
	}
	at := entries[0].GetIndex()
	if at > next.last+1 {
		return fmt.Errorf("%w: appending at %d after last index %d", ErrLogGap, at, next.last)
	}
	log := tx.Bucket(bucketLog)
	if err := deleteFrom(log, at, next.last); err != nil {
		return err
	}
	for i, e := range entries {
		if e.GetIndex() != at+uint64(i) {
			return fmt.Errorf("%w: entry %d where %d belongs", ErrLogGap, e.GetIndex(), at+uint64(i))
		}
		if err := log.Put(indexKey(e.GetIndex()), encodeEntry(e)); err != nil {
			return err
		}
	}
	next.last = at + uint64(len(entries)) - 1
	return nil
}

// deleteFrom deletes the entries lo … hi that exist.
func deleteFrom(log *bolt.Bucket, lo, hi uint64) error {
	c := log.Cursor()
	for k, _ := c.Seek(indexKey(lo)); k != nil && bigEndian(k) <= hi; k, _ = c.Seek(indexKey(lo)) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}
