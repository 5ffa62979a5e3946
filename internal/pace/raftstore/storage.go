package raftstore

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

var _ raft.Storage = (*Store)(nil)

// ErrOutOfBounds reports a request past the last entry, which raft never
// makes of a correct storage (MemoryStorage panics on it).
var ErrOutOfBounds = errors.New("raft store: index beyond the last entry")

// InitialState returns the saved HardState (nil when none) and the
// ConfState of the latest snapshot (empty when none).
func (s *Store) InitialState() (*pb.HardState, *pb.ConfState, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	cs := proto.Clone(s.meta.snap.GetMetadata().GetConfState()).(*pb.ConfState)
	return cloneHardState(s.meta.hard), pb.EnsureConfState(cs), nil
}

// HardState returns the saved HardState, nil when none.
func (s *Store) HardState() *pb.HardState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return cloneHardState(s.meta.hard)
}

// Entries returns the entries [lo, hi), at least one when any, and no more
// than fit in maxSize bytes (raft's protobuf sizes) beyond the first.
func (s *Store) Entries(lo, hi, maxSize uint64) ([]*pb.Entry, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch {
	case lo <= s.meta.logStart.index:
		return nil, raft.ErrCompacted
	case hi > s.meta.last+1:
		return nil, fmt.Errorf("%w: entries [%d, %d) past last index %d", ErrOutOfBounds, lo, hi, s.meta.last)
	case s.meta.last == s.meta.logStart.index:
		return nil, raft.ErrUnavailable
	case lo >= hi:
		return nil, nil
	}
	var out []*pb.Entry
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketLog).Cursor()
		var size uint64
		k, v := c.Seek(indexKey(lo))
		for i := lo; i < hi; i++ {
			if k == nil || bigEndian(k) != i {
				return fmt.Errorf("%w: %s: entry %d missing", ErrCorrupt, s.path, i)
			}
			e, err := decodeEntry(i, v)
			if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrCorrupt, s.path, err)
			}
			size += uint64(proto.Size(e))
			if len(out) > 0 && size > maxSize {
				break
			}
			out = append(out, e)
			k, v = c.Next()
		}
		return nil
	})
	return out, err
}

// Term returns the term of entry i, which may be the entry just before the
// first one held.
func (s *Store) Term(i uint64) (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.term(i)
}

// term reads a term; the caller holds mu.
func (s *Store) term(i uint64) (uint64, error) {
	var term uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		term, err = s.termIn(tx, s.meta, i)
		return err
	})
	return term, err
}

// termIn reads the term of entry i within tx, whose bounds are b.
func (s *Store) termIn(tx *bolt.Tx, b bounds, i uint64) (uint64, error) {
	switch {
	case i < b.logStart.index:
		return 0, raft.ErrCompacted
	case i == b.logStart.index:
		return b.logStart.term, nil
	case i > b.last:
		return 0, raft.ErrUnavailable
	}
	term, err := entryTerm(i, tx.Bucket(bucketLog).Get(indexKey(i)))
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrCorrupt, s.path, err)
	}
	return term, nil
}

// LastIndex is the index of the last entry held.
func (s *Store) LastIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.meta.last, nil
}

// FirstIndex is the index of the first entry that may be held.
func (s *Store) FirstIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.meta.logStart.index + 1, nil
}

// Snapshot returns the latest snapshot with its data (an empty snapshot
// when none was saved).
func (s *Store) Snapshot() (*pb.Snapshot, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	snap := pb.EnsureSnapshot(nil)
	err := s.db.View(func(tx *bolt.Tx) error {
		rec := tx.Bucket(bucketSnapshot).Get(keySnapshot)
		if rec == nil {
			return nil
		}
		var err error
		snap, err = decodeSnapshot(rec, true)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, s.path, err)
	}
	return snap, nil
}
