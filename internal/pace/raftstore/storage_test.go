package raftstore

import (
	"errors"
	"math"
	"testing"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// The tests in this file port etcd-io/raft storage_test.go (MemoryStorage)
// case by case, so this store honours the same raft.Storage contract.

func TestStorageTerm(t *testing.T) {
	tests := []struct {
		i     uint64
		werr  error
		wterm uint64
	}{
		{2, raft.ErrCompacted, 0},
		{3, nil, 3},
		{4, nil, 4},
		{5, nil, 5},
		{6, raft.ErrUnavailable, 0},
	}
	for _, tt := range tests {
		s := storeWith(t, ents(3, 3, 4, 5))
		term, err := s.Term(tt.i)
		if !errors.Is(err, tt.werr) || term != tt.wterm {
			t.Errorf("Term(%d) = %d, %v; want %d, %v", tt.i, term, err, tt.wterm, tt.werr)
		}
	}
}

func TestStorageEntries(t *testing.T) {
	e := ents(3, 3, 4, 5, 6)
	size := func(i int) uint64 { return uint64(proto.Size(e[i])) }
	tests := []struct {
		lo, hi, maxsize uint64
		werr            error
		wentries        []*pb.Entry
	}{
		{2, 6, math.MaxUint64, raft.ErrCompacted, nil},
		{3, 4, math.MaxUint64, raft.ErrCompacted, nil},
		{4, 5, math.MaxUint64, nil, ents(4, 4)},
		{4, 6, math.MaxUint64, nil, ents(4, 4, 5)},
		{4, 7, math.MaxUint64, nil, ents(4, 4, 5, 6)},
		// even if maxsize is zero, the first entry should be returned
		{4, 7, 0, nil, ents(4, 4)},
		// limit to 2
		{4, 7, size(1) + size(2), nil, ents(4, 4, 5)},
		{4, 7, size(1) + size(2) + size(3)/2, nil, ents(4, 4, 5)},
		{4, 7, size(1) + size(2) + size(3) - 1, nil, ents(4, 4, 5)},
		// all
		{4, 7, size(1) + size(2) + size(3), nil, ents(4, 4, 5, 6)},
	}
	for _, tt := range tests {
		s := storeWith(t, e)
		got, err := s.Entries(tt.lo, tt.hi, tt.maxsize)
		if !errors.Is(err, tt.werr) {
			t.Fatalf("Entries(%d, %d, %d) error %v, want %v", tt.lo, tt.hi, tt.maxsize, err, tt.werr)
		}
		requireEntries(t, tt.wentries, got)
	}
	s := storeWith(t, e)
	if _, err := s.Entries(4, 8, math.MaxUint64); !errors.Is(err, ErrOutOfBounds) {
		t.Fatalf("Entries past the last index: %v (MemoryStorage panics; this store refuses)", err)
	}
}

func TestStorageLastIndex(t *testing.T) {
	s := storeWith(t, ents(3, 3, 4, 5))
	if last, _ := s.LastIndex(); last != 5 {
		t.Fatalf("LastIndex = %d, want 5", last)
	}
	if err := s.Save(nil, ents(6, 5), nil); err != nil {
		t.Fatal(err)
	}
	if last, _ := s.LastIndex(); last != 6 {
		t.Fatalf("LastIndex = %d, want 6", last)
	}
}

func TestStorageFirstIndex(t *testing.T) {
	s := storeWith(t, ents(3, 3, 4, 5))
	if first, _ := s.FirstIndex(); first != 4 {
		t.Fatalf("FirstIndex = %d, want 4", first)
	}
	if err := s.Compact(4); err != nil {
		t.Fatal(err)
	}
	if first, _ := s.FirstIndex(); first != 5 {
		t.Fatalf("FirstIndex = %d, want 5", first)
	}
}

func TestStorageCompact(t *testing.T) {
	tests := []struct {
		i             uint64
		werr          error
		windex, wterm uint64
		wlen          int
	}{
		{2, raft.ErrCompacted, 3, 3, 3},
		{3, raft.ErrCompacted, 3, 3, 3},
		{4, nil, 4, 4, 2},
		{5, nil, 5, 5, 1},
	}
	for _, tt := range tests {
		s := storeWith(t, ents(3, 3, 4, 5))
		if err := s.Compact(tt.i); !errors.Is(err, tt.werr) {
			t.Fatalf("Compact(%d) = %v, want %v", tt.i, err, tt.werr)
		}
		first, _ := s.FirstIndex()
		term, _ := s.Term(first - 1)
		held := len(logOf(t, s)) + 1 // MemoryStorage counts its dummy entry
		if first-1 != tt.windex || term != tt.wterm || held != tt.wlen {
			t.Fatalf("Compact(%d): start (%d, %d), %d entries; want (%d, %d), %d", tt.i, first-1, term, held, tt.windex, tt.wterm, tt.wlen)
		}
	}
}

func TestStorageCreateSnapshot(t *testing.T) {
	cs := &pb.ConfState{Voters: []uint64{1, 2, 3}}
	data := []byte("data")
	for _, i := range []uint64{4, 5} {
		s := storeWith(t, ents(3, 3, 4, 5))
		snap, err := s.CreateSnapshot(i, cs, data)
		if err != nil {
			t.Fatal(err)
		}
		want := &pb.Snapshot{Data: data, Metadata: &pb.SnapshotMetadata{Index: new(i), Term: new(i), ConfState: pb.EnsureConfState(&pb.ConfState{Voters: []uint64{1, 2, 3}})}}
		if !proto.Equal(want, snap) {
			t.Fatalf("CreateSnapshot(%d) = %v, want %v", i, snap, want)
		}
		stored, _ := s.Snapshot()
		if !proto.Equal(want, stored) {
			t.Fatalf("Snapshot() = %v after CreateSnapshot(%d)", stored, i)
		}
	}
	s := storeWith(t, ents(3, 3, 4, 5))
	if _, err := s.CreateSnapshot(3, cs, data); !errors.Is(err, raft.ErrSnapOutOfDate) {
		t.Fatalf("snapshot at the current snapshot index: %v", err)
	}
	if _, err := s.CreateSnapshot(6, cs, data); !errors.Is(err, ErrOutOfBounds) {
		t.Fatalf("snapshot past the last index: %v", err)
	}
}

func TestStorageAppend(t *testing.T) {
	tests := []struct {
		entries  []*pb.Entry
		wentries []*pb.Entry
	}{
		{ents(1, 1, 2), ents(3, 3, 4, 5)},
		{ents(3, 3, 4, 5), ents(3, 3, 4, 5)},
		{ents(3, 3, 6, 6), ents(3, 3, 6, 6)},
		{ents(3, 3, 4, 5, 5), ents(3, 3, 4, 5, 5)},
		// Truncate incoming entries, truncate the existing entries and append.
		{ents(2, 3, 3, 5), ents(3, 3, 5)},
		// Truncate the existing entries and append.
		{ents(4, 5), ents(3, 3, 5)},
		// Direct append.
		{ents(6, 5), ents(3, 3, 4, 5, 5)},
	}
	for _, tt := range tests {
		s := storeWith(t, ents(3, 3, 4, 5))
		if err := s.Save(nil, tt.entries, nil); err != nil {
			t.Fatal(err)
		}
		requireEntries(t, tt.wentries[1:], logOf(t, s))
		if first, _ := s.FirstIndex(); first != tt.wentries[0].GetIndex()+1 {
			t.Fatalf("FirstIndex = %d", first)
		}
	}
	s := storeWith(t, ents(3, 3, 4, 5))
	if err := s.Save(nil, ents(7, 5), nil); !errors.Is(err, ErrLogGap) {
		t.Fatalf("append leaving a hole: %v (MemoryStorage panics; this store refuses)", err)
	}
}

func TestStorageApplySnapshot(t *testing.T) {
	cs := &pb.ConfState{Voters: []uint64{1, 2, 3}}
	data := []byte("data")
	snap := func(i uint64) *pb.Snapshot {
		return &pb.Snapshot{Data: data, Metadata: &pb.SnapshotMetadata{Index: new(i), Term: new(i), ConfState: cs}}
	}
	tests := []struct {
		name      string
		snapshots []*pb.Snapshot
		werr      error
	}{
		{"normal case", []*pb.Snapshot{snap(4)}, nil},
		{"snapshot out of date", []*pb.Snapshot{snap(4), snap(3)}, raft.ErrSnapOutOfDate},
		{"bootstrap with confState", []*pb.Snapshot{{Data: data, Metadata: &pb.SnapshotMetadata{ConfState: cs}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTemp(t)
			var err error
			for _, sn := range tt.snapshots {
				err = s.ApplySnapshot(sn)
			}
			if !errors.Is(err, tt.werr) {
				t.Fatalf("ApplySnapshot = %v, want %v", err, tt.werr)
			}
		})
	}
}
