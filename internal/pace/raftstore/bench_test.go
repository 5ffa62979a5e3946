package raftstore

import (
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
)

// BenchmarkSave is one Ready (HardState + one 200-byte entry) per fsynced
// bbolt transaction: the floor under every consensus commit.
func BenchmarkSave(b *testing.B) {
	s, err := Open(b.TempDir()+"/"+FileName, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	data := make([]byte, 200)
	for i := uint64(1); b.Loop(); i++ {
		e := &pb.Entry{Index: new(i), Term: new(uint64(1)), Type: pb.EntryNormal.Enum(), Data: data}
		if err := s.Save(hardState(1, 1, i), []*pb.Entry{e}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTerm is raft's most frequent storage read.
func BenchmarkTerm(b *testing.B) {
	s, err := Open(b.TempDir()+"/"+FileName, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Save(hardState(1, 1, 100), dataEntries(1, 1, 100), nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Term(50); err != nil {
			b.Fatal(err)
		}
	}
}
