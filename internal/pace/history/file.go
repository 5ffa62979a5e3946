package history

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// FileVersion is the layout MarshalBinary writes: "PACEHIST", the version (uvarint), the
// body, then a CRC-32C of everything before it (4 bytes, big-endian). The body is the leader's
// rings (if it ever led) and open minute, then each machine's id and rings; a ring is its
// newest period and the rows that hold anything, each slot its count and, when counted, its
// low, high and total — all varints, so a sparse history is a small file.
const FileVersion = 1

const fileMagic = "PACEHIST"

// ErrNewerFormat: the file was written by a newer build. It is kept, not overwritten.
// ErrCorrupt: the file cannot be read (cut short, damaged, or not a history file).
var (
	ErrNewerFormat = errors.New("history: the file was written by a newer format version")
	ErrCorrupt     = errors.New("history: the file is unreadable")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary is the Fleet as a history file.
func (f *Fleet) MarshalBinary() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leaderMu.Lock()
	defer f.leaderMu.Unlock()
	b := binary.AppendUvarint([]byte(fileMagic), FileVersion)
	b = binary.AppendUvarint(b, machineCols)
	b = binary.AppendUvarint(b, uint64(leaderCols))
	if l := f.leader; l == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = appendRings(b, &l.minutes, &l.hours, &l.days)
		b = appendBool(b, l.hasOpen)
		b = binary.AppendVarint(b, l.open)
	}
	b = binary.AppendUvarint(b, uint64(len(f.machines)))
	for _, id := range slices.Sorted(maps.Keys(f.machines)) {
		m := f.machines[id]
		b = binary.AppendUvarint(b, uint64(len(id)))
		b = append(b, id...)
		b = appendRings(b, &m.minutes, &m.hours, &m.days)
	}
	return binary.BigEndian.AppendUint32(b, crc(b)), nil
}

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendRings(b []byte, rs ...*ring) []byte {
	for _, r := range rs {
		b = appendBool(b, r.has)
		if !r.has {
			continue
		}
		b = binary.AppendVarint(b, r.head)
		first := r.head - r.size + 1
		var rows []int64
		for p := first; p <= r.head; p++ {
			if recorded(r.at(p)) {
				rows = append(rows, p-first)
			}
		}
		b = binary.AppendUvarint(b, uint64(len(rows)))
		for _, i := range rows {
			b = binary.AppendUvarint(b, uint64(i))
			for _, s := range r.at(first + i) {
				b = binary.AppendUvarint(b, uint64(s.Count))
				if s.Count > 0 {
					b = binary.AppendUvarint(b, s.Low)
					b = binary.AppendUvarint(b, s.High)
					b = binary.AppendUvarint(b, s.Total)
				}
			}
		}
	}
	return b
}

// UnmarshalBinary replaces the Fleet's history with the file's. A file from a newer build is
// ErrNewerFormat, anything else it cannot read ErrCorrupt; either way the Fleet is unchanged.
func (f *Fleet) UnmarshalBinary(data []byte) error {
	body, err := fileBody(data)
	if err != nil {
		return err
	}
	d := decoder{b: body}
	l, machines := d.fleet()
	if d.err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, d.err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leaderMu.Lock()
	defer f.leaderMu.Unlock()
	f.leader, f.machines = l, machines
	return nil
}

// fileBody checks the magic, the version and the checksum, and returns what lies between.
func fileBody(data []byte) ([]byte, error) {
	rest, ok := bytesCut(data, fileMagic)
	if !ok {
		return nil, fmt.Errorf("%w: not a history file", ErrCorrupt)
	}
	version, n := binary.Uvarint(rest)
	switch {
	case n <= 0:
		return nil, fmt.Errorf("%w: no version", ErrCorrupt)
	case version > FileVersion:
		return nil, fmt.Errorf("%w (%d; this build reads %d)", ErrNewerFormat, version, FileVersion)
	case version < FileVersion || len(rest) < n+4:
		return nil, fmt.Errorf("%w: version %d, %d bytes", ErrCorrupt, version, len(data))
	}
	end := len(data) - 4
	if crc(data[:end]) != binary.BigEndian.Uint32(data[end:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	return rest[n : len(rest)-4], nil
}

func bytesCut(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return nil, false
	}
	return b[len(prefix):], true
}

// decoder reads the body; the first failure sticks and every later read is zero.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, a...)
	}
}

func (d *decoder) uvarint(limit uint64, what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > limit {
		d.fail("%s: bad or above %d", what, limit)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("%s: bad varint", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bool(what string) bool { return d.uvarint(1, what) == 1 }

// fleet reads the whole body.
func (d *decoder) fleet() (*leader, map[string]*machine) {
	if d.uvarint(255, "machine series") != machineCols || d.uvarint(255, "leader series") != uint64(leaderCols) {
		d.fail("series counts differ from this build's")
	}
	var l *leader
	if d.bool("leader") {
		l = newLeader()
		d.rings(&l.minutes, &l.hours, &l.days)
		l.hasOpen = d.bool("open")
		if l.open = d.varint("open minute"); l.open < 0 {
			d.fail("open minute %d", l.open)
		}
	}
	count := d.uvarint(MaxMachines, "machines") // refused before anything is allocated for them
	machines := make(map[string]*machine, count)
	for range count {
		id := string(d.text(verbs.MaxID, "machine id"))
		if _, dup := machines[id]; dup || d.err != nil {
			d.fail("machine id %q twice or unreadable", id)
			break
		}
		m := newMachine()
		d.rings(&m.minutes, &m.hours, &m.days)
		machines[id] = m
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the last machine", len(d.b))
	}
	return l, machines
}

func (d *decoder) text(limit uint64, what string) []byte {
	n := d.uvarint(limit, what)
	if d.err == nil && (n == 0 || uint64(len(d.b)) < n) {
		d.fail("%s: %d bytes", what, n)
	}
	if d.err != nil {
		return nil
	}
	t := d.b[:n]
	d.b = d.b[n:]
	return t
}
