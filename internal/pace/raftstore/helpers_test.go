package raftstore

import (
	"path/filepath"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// ents builds entries first, first+1, … with the given terms, as etcd's
// index(first).terms(…) helper does.
func ents(first uint64, terms ...uint64) []*pb.Entry {
	out := make([]*pb.Entry, len(terms))
	for i, term := range terms {
		out[i] = &pb.Entry{Index: new(first + uint64(i)), Term: new(term), Type: pb.EntryNormal.Enum()}
	}
	return out
}

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), FileName), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// storeWith returns a store shaped like etcd's MemoryStorage{ents: e}: e[0]
// is the entry just before the first held (here, a snapshot's position),
// the rest are held.
func storeWith(t *testing.T, e []*pb.Entry) *Store {
	t.Helper()
	s := openTemp(t)
	snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{Index: new(e[0].GetIndex()), Term: new(e[0].GetTerm())}}
	if err := s.ApplySnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(nil, e[1:], nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// requireEntries compares entries by value (index, term, type, data).
func requireEntries(t *testing.T, want, got []*pb.Entry) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("got %d entries %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		if !proto.Equal(want[i], got[i]) {
			t.Fatalf("entry %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

// logOf reads every held entry back.
func logOf(t *testing.T, s *Store) []*pb.Entry {
	t.Helper()
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	if last < first {
		return nil
	}
	e, err := s.Entries(first, last+1, ^uint64(0))
	if err != nil {
		t.Fatal(err)
	}
	return e
}
