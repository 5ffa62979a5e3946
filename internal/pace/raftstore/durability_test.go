package raftstore

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func hardState(term, vote, commit uint64) *pb.HardState {
	return &pb.HardState{Term: new(term), Vote: new(vote), Commit: new(commit)}
}

// dataEntries builds entries whose data says who they are.
func dataEntries(first, term uint64, n int) []*pb.Entry {
	out := ents(first, make([]uint64, n)...)
	for i, e := range out {
		e.Term = new(term)
		e.Data = []byte(strings.Repeat("x", i) + "entry")
	}
	return out
}

// TestReopenFindsEverything: a closed store reopens with the HardState,
// entries, snapshot, ConfState and bounds it held.
func TestReopenFindsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	written := dataEntries(1, 2, 20)
	if err := s.Save(hardState(2, 1, 15), written, nil); err != nil {
		t.Fatal(err)
	}
	cs := &pb.ConfState{Voters: []uint64{1}, Learners: []uint64{2}}
	if _, err := s.CreateSnapshot(15, cs, []byte("fleet state")); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(10); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs, gotCS, _ := s.InitialState()
	if !proto.Equal(hs, hardState(2, 1, 15)) || !proto.Equal(gotCS, pb.EnsureConfState(cs)) {
		t.Fatalf("InitialState = %v, %v", hs, gotCS)
	}
	requireEntries(t, written[10:], logOf(t, s))
	if term, _ := s.Term(10); term != 2 {
		t.Fatalf("term of the compacted position = %d", term)
	}
	snap, _ := s.Snapshot()
	if snap.GetMetadata().GetIndex() != 15 || string(snap.GetData()) != "fleet state" {
		t.Fatalf("snapshot after reopen: %v", snap)
	}
}

// TestSaveIsOneTransaction injects a failure after every part of a Ready
// is written and before the commit: nothing of it may survive, in memory
// or on disk.
func TestSaveIsOneTransaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(hardState(1, 1, 3), dataEntries(1, 1, 5), nil); err != nil {
		t.Fatal(err)
	}
	injected := errors.New("injected: disk full before commit")
	s.fault = func(op string) error { return injected }
	snap := &pb.Snapshot{Data: []byte("new"), Metadata: &pb.SnapshotMetadata{Index: new(uint64(9)), Term: new(uint64(3))}}
	ready := []func() error{
		func() error { return s.Save(hardState(3, 2, 9), dataEntries(10, 3, 4), snap) },
		func() error { return s.Save(hardState(2, 2, 4), dataEntries(3, 2, 6), nil) }, // truncating
		func() error { return s.Compact(3) },
		func() error { _, err := s.CreateSnapshot(3, nil, []byte("x")); return err },
	}
	for i, op := range ready {
		if err := op(); !errors.Is(err, injected) {
			t.Fatalf("write %d: %v, want the injected fault", i, err)
		}
		checkUntouched(t, s)
	}
	s.fault = nil
	s.Close()
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkUntouched(t, s)
}

func checkUntouched(t *testing.T, s *Store) {
	t.Helper()
	hs, _, _ := s.InitialState()
	first, _ := s.FirstIndex()
	snap, _ := s.Snapshot()
	if !proto.Equal(hs, hardState(1, 1, 3)) || first != 1 || snap.GetMetadata().GetIndex() != 0 {
		t.Fatalf("a failed write left traces: hs %v, first %d, snapshot %v", hs, first, snap.GetMetadata())
	}
	requireEntries(t, dataEntries(1, 1, 5), logOf(t, s))
}

// TestSaveRefusesCommitBeyondLog: a HardState may not commit an entry the
// same Ready does not leave on disk.
func TestSaveRefusesCommitBeyondLog(t *testing.T) {
	s := openTemp(t)
	if err := s.Save(hardState(1, 1, 4), dataEntries(1, 1, 3), nil); !errors.Is(err, ErrLogGap) {
		t.Fatalf("commit beyond the log: %v", err)
	}
	if last, _ := s.LastIndex(); last != 0 {
		t.Fatalf("refused Save left entries up to %d", last)
	}
}

// TestOpenRefusesDamage edits a closed file behind the store's back; Open
// must refuse it as ErrCorrupt (or ErrFormat) naming the path.
func TestOpenRefusesDamage(t *testing.T) {
	cases := map[string]struct {
		edit func(tx *bolt.Tx) error
		want error
	}{
		"flipped entry byte": {func(tx *bolt.Tx) error {
			v := append([]byte(nil), tx.Bucket(bucketLog).Get(indexKey(3))...)
			v[len(v)-1] ^= 1
			return tx.Bucket(bucketLog).Put(indexKey(3), v)
		}, ErrCorrupt},
		"entry under the wrong key": {func(tx *bolt.Tx) error {
			return tx.Bucket(bucketLog).Put(indexKey(3), encodeEntry(dataEntries(4, 1, 1)[0]))
		}, ErrCorrupt},
		"hole in the log": {func(tx *bolt.Tx) error { return tx.Bucket(bucketLog).Delete(indexKey(3)) }, ErrCorrupt},
		"truncated hard state": {func(tx *bolt.Tx) error {
			return tx.Bucket(bucketState).Put(keyHardState, encodeHardState(hardState(1, 1, 3))[:10])
		}, ErrCorrupt},
		"commit beyond log": {func(tx *bolt.Tx) error {
			return tx.Bucket(bucketState).Put(keyHardState, encodeHardState(hardState(1, 1, 99)))
		}, ErrCorrupt},
		"term regresses": {func(tx *bolt.Tx) error {
			return tx.Bucket(bucketLog).Put(indexKey(5), encodeEntry(ents(5, 0)[0]))
		}, ErrCorrupt},
		"future format": {func(tx *bolt.Tx) error { return tx.Bucket(bucketState).Put(keyFormat, []byte{9}) }, ErrFormat},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			s, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Save(hardState(1, 1, 3), dataEntries(1, 1, 5), nil); err != nil {
				t.Fatal(err)
			}
			s.Close()
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(tc.edit); err != nil {
				t.Fatal(err)
			}
			db.Close()
			_, err = Open(path, Options{})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open of a damaged file = %v, want %v naming %s", err, tc.want, path)
			}
		})
	}
}

// TestSecondOpenRefused: the file lock refuses a second holder, by path.
func TestSecondOpenRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = Open(path, Options{LockTimeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second Open = %v, want ErrLocked naming %s", err, path)
	}
}
