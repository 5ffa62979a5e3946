package hitmemo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
)

// Format is the memo layout this build writes and reads; a memo of another format is ignored.
const Format = 1

// Bounds checked before anything is allocated.
const (
	MaxPath  = 4096    // bytes in one path
	MaxFiles = 1 << 16 // input files of one compile
)

// RacyWindow is how long a file must have been unchanged when its stat was taken for a later
// equal stat to stand for its content: a file written within one timestamp tick of the stat
// could change again without its times moving. Two seconds is far beyond any tick.
const RacyWindow = 2 * time.Second

// ErrMalformed reports bytes that are not a memo of this format.
var ErrMalformed = errors.New("hitmemo: malformed memo")

// Stat is the part of a file's stat that changes when its content may have.
type Stat struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64 // nanoseconds
}

// StatOf takes the signature from a stat result.
func StatOf(st *syscall.Stat_t) Stat {
	return Stat{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
}

// Trusted reports whether a file whose stat now equals recorded, a stat taken at recordedAt
// (nanoseconds), still has the content it had then.
func Trusted(now, recorded Stat, recordedAt int64) bool {
	w := int64(RacyWindow)
	return now == recorded && recordedAt-recorded.Mtime >= w && recordedAt-recorded.Ctime >= w
}

// File is one input of the compile.
type File struct {
	Path string          // absolute path on this machine
	Hash cachekey.Digest // content hash (cachekey.Content), as the manifest records it
	Stat Stat            // its stat when the memo was written
}

// Entry is one memo.
type Entry struct {
	RecordedAt int64           // when the stats were taken, Unix nanoseconds
	Compiler   Stat            // the real compiler's stat (symlinks followed)
	ObjectKey  cachekey.Digest // what the manifest pointed at
	Source     string          // the translation unit as the command names it, for statistics
	Output     string          // absolute path of the object
	Depfile    string          // absolute path of the depfile; "" when the command writes none
	Files      []File
}

const (
	statLen    = 5 * 8
	minFileLen = 4 + cachekey.Size + statLen
)

// Encode lays the entry out as [u8 format][i64 recordedAt][stat compiler][32 objectKey]
// [str source][str output][str depfile][u32 count] count × ([str path][32 hash][stat]), every
// integer little-endian, every str a u32 length and its bytes.
func Encode(e Entry) ([]byte, error) {
	if len(e.Files) > MaxFiles {
		return nil, fmt.Errorf("%w: %d files", ErrMalformed, len(e.Files))
	}
	b := make([]byte, 0, 1+8+statLen+cachekey.Size+64*(1+len(e.Files)))
	b = append(b, Format)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.RecordedAt))
	b = appendStat(b, e.Compiler)
	b = append(b, e.ObjectKey[:]...)
	var err error
	for _, s := range []string{e.Source, e.Output, e.Depfile} {
		if b, err = appendStr(b, s); err != nil {
			return nil, err
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(e.Files)))
	for _, f := range e.Files {
		if b, err = appendStr(b, f.Path); err != nil {
			return nil, err
		}
		b = append(b, f.Hash[:]...)
		b = appendStat(b, f.Stat)
	}
	return b, nil
}

func appendStr(b []byte, s string) ([]byte, error) {
	if len(s) > MaxPath {
		return nil, fmt.Errorf("%w: a %d-byte path", ErrMalformed, len(s))
	}
	return append(binary.LittleEndian.AppendUint32(b, uint32(len(s))), s...), nil
}

func appendStat(b []byte, s Stat) []byte {
	for _, v := range []uint64{s.Dev, s.Ino, uint64(s.Size), uint64(s.Mtime), uint64(s.Ctime)} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

// Decode reads a memo. The file count is checked against the bytes present before the list is
// made, and nothing may follow the last file.
func Decode(b []byte) (Entry, error) {
	d := decoder{b: b}
	var e Entry
	if d.u8() != Format {
		return Entry{}, fmt.Errorf("%w: not format %d", ErrMalformed, Format)
	}
	e.RecordedAt = int64(d.u64())
	e.Compiler = d.stat()
	copy(e.ObjectKey[:], d.take(cachekey.Size))
	e.Source, e.Output, e.Depfile = d.str(), d.str(), d.str()
	n := d.u32()
	if d.err != nil || n > MaxFiles || uint64(n)*minFileLen > uint64(len(d.b)) {
		return Entry{}, fmt.Errorf("%w: file count %d", ErrMalformed, n)
	}
	e.Files = make([]File, n)
	for i := range e.Files {
		f := &e.Files[i]
		f.Path = d.str()
		copy(f.Hash[:], d.take(cachekey.Size))
		f.Stat = d.stat()
	}
	if d.err != nil || len(d.b) != 0 {
		return Entry{}, fmt.Errorf("%w: truncated or trailing bytes", ErrMalformed)
	}
	return e, nil
}

// decoder reads fields in order; after the first shortfall every read yields zero and err
// stays set.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || n > len(d.b) {
		d.err = ErrMalformed
		var zeros [cachekey.Size]byte
		return zeros[:min(n, cachekey.Size)] // fixed fields are never longer than a digest
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) u8() byte { return d.take(1)[0] }

func (d *decoder) u32() uint32 { return binary.LittleEndian.Uint32(d.take(4)) }

func (d *decoder) u64() uint64 { return binary.LittleEndian.Uint64(d.take(8)) }

func (d *decoder) stat() Stat {
	return Stat{Dev: d.u64(), Ino: d.u64(), Size: int64(d.u64()), Mtime: int64(d.u64()), Ctime: int64(d.u64())}
}

func (d *decoder) str() string {
	n := d.u32()
	if n > MaxPath {
		d.err = ErrMalformed
		return ""
	}
	return string(d.take(int(n)))
}
