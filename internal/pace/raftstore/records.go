package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Record layout: u32 BE CRC-32C of the body, then the body. Bodies:
//
//	entry:      index u64 | term u64 | type u8 | data
//	hard state: term u64 | vote u64 | commit u64
//	log start:  index u64 | term u64   (the entry just before the first one held)
//	snapshot:   index u64 | term u64 | conf state length u32 | conf state (protobuf) | data
const (
	crcLen         = 4
	entryHeaderLen = 8 + 8 + 1
	hardStateLen   = 24
	logStartLen    = 16
	snapHeaderLen  = 8 + 8 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errRecord is wrapped into ErrCorrupt by callers that know the path.
var errRecord = errors.New("record fails its check")

func seal(body []byte) []byte {
	out := make([]byte, crcLen, crcLen+len(body))
	binary.BigEndian.PutUint32(out, crc32.Checksum(body, castagnoli))
	return append(out, body...)
}

func unseal(rec []byte, minLen int) ([]byte, error) {
	if len(rec) < crcLen+minLen {
		return nil, fmt.Errorf("%w: %d bytes", errRecord, len(rec))
	}
	body := rec[crcLen:]
	if binary.BigEndian.Uint32(rec) != crc32.Checksum(body, castagnoli) {
		return nil, fmt.Errorf("%w: checksum mismatch", errRecord)
	}
	return body, nil
}

func indexKey(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }

func encodeEntry(e *pb.Entry) []byte {
	b := make([]byte, 0, entryHeaderLen+len(e.GetData()))
	b = binary.BigEndian.AppendUint64(b, e.GetIndex())
	b = binary.BigEndian.AppendUint64(b, e.GetTerm())
	b = append(b, byte(e.GetType()))
	return seal(append(b, e.GetData()...))
}

// decodeEntry checks the record and that it is the entry at index. The data
// is copied: bbolt values live only as long as their transaction.
func decodeEntry(index uint64, rec []byte) (*pb.Entry, error) {
	body, err := unseal(rec, entryHeaderLen)
	if err != nil {
		return nil, fmt.Errorf("entry %d: %w", index, err)
	}
	if got := binary.BigEndian.Uint64(body); got != index {
		return nil, fmt.Errorf("entry %d: %w: record holds index %d", index, errRecord, got)
	}
	typ := pb.EntryType(body[16])
	if _, known := pb.EntryType_name[int32(typ)]; !known {
		return nil, fmt.Errorf("entry %d: %w: entry type %d", index, errRecord, typ)
	}
	e := &pb.Entry{Index: new(index), Term: new(binary.BigEndian.Uint64(body[8:])), Type: typ.Enum()}
	if data := body[entryHeaderLen:]; len(data) > 0 {
		e.Data = append([]byte(nil), data...)
	}
	return e, nil
}

// entryTerm checks an entry record and reads only its term, copying
// nothing: raft asks for terms far more often than for entries.
func entryTerm(index uint64, rec []byte) (uint64, error) {
	body, err := unseal(rec, entryHeaderLen)
	if err != nil {
		return 0, fmt.Errorf("entry %d: %w", index, err)
	}
	if got := binary.BigEndian.Uint64(body); got != index {
		return 0, fmt.Errorf("entry %d: %w: record holds index %d", index, errRecord, got)
	}
	return binary.BigEndian.Uint64(body[8:]), nil
}

func encodeHardState(hs *pb.HardState) []byte {
	b := make([]byte, 0, hardStateLen)
	b = binary.BigEndian.AppendUint64(b, hs.GetTerm())
	b = binary.BigEndian.AppendUint64(b, hs.GetVote())
	return seal(binary.BigEndian.AppendUint64(b, hs.GetCommit()))
}

func decodeHardState(rec []byte) (*pb.HardState, error) {
	body, err := unseal(rec, hardStateLen)
	if err != nil || len(body) != hardStateLen {
		return nil, fmt.Errorf("hard state: %w (%v)", errRecord, err)
	}
	return &pb.HardState{
		Term:   new(binary.BigEndian.Uint64(body)),
		Vote:   new(binary.BigEndian.Uint64(body[8:])),
		Commit: new(binary.BigEndian.Uint64(body[16:])),
	}, nil
}

// entryID names one log position.
type entryID struct{ index, term uint64 }

func encodeLogStart(id entryID) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, logStartLen), id.index)
	return seal(binary.BigEndian.AppendUint64(b, id.term))
}

func decodeLogStart(rec []byte) (entryID, error) {
	body, err := unseal(rec, logStartLen)
	if err != nil || len(body) != logStartLen {
		return entryID{}, fmt.Errorf("log start: %w (%v)", errRecord, err)
	}
	return entryID{binary.BigEndian.Uint64(body), binary.BigEndian.Uint64(body[8:])}, nil
}

func encodeSnapshot(s *pb.Snapshot) ([]byte, error) {
	cs, err := proto.Marshal(pb.EnsureConfState(proto.Clone(s.GetMetadata().GetConfState()).(*pb.ConfState)))
	if err != nil {
		return nil, fmt.Errorf("encode conf state: %w", err)
	}
	b := make([]byte, 0, snapHeaderLen+len(cs)+len(s.GetData()))
	b = binary.BigEndian.AppendUint64(b, s.GetMetadata().GetIndex())
	b = binary.BigEndian.AppendUint64(b, s.GetMetadata().GetTerm())
	b = binary.BigEndian.AppendUint32(b, uint32(len(cs)))
	b = append(b, cs...)
	return seal(append(b, s.GetData()...)), nil
}

// decodeSnapshot decodes a snapshot record; withData false skips copying
// the (possibly large) state machine data.
func decodeSnapshot(rec []byte, withData bool) (*pb.Snapshot, error) {
	body, err := unseal(rec, snapHeaderLen)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	csLen := uint64(binary.BigEndian.Uint32(body[16:]))
	if csLen > uint64(len(body)-snapHeaderLen) {
		return nil, fmt.Errorf("snapshot: %w: conf state of %d bytes overruns the record", errRecord, csLen)
	}
	cs := &pb.ConfState{}
	if err := proto.Unmarshal(body[snapHeaderLen:snapHeaderLen+csLen], cs); err != nil {
		return nil, fmt.Errorf("snapshot: %w: conf state: %v", errRecord, err)
	}
	snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{
		Index:     new(binary.BigEndian.Uint64(body)),
		Term:      new(binary.BigEndian.Uint64(body[8:])),
		ConfState: pb.EnsureConfState(cs),
	}}
	if data := body[snapHeaderLen+csLen:]; withData && len(data) > 0 {
		snap.Data = append([]byte(nil), data...)
	}
	return snap, nil
}
