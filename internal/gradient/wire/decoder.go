package wire

import (
	"encoding/binary"
	"math"
	"strings"
	"unicode/utf8"
)

// decoder reads one value for one protocol version from buf, starting at pos.
type decoder struct {
	buf     []byte
	pos     int
	version uint16
	arena   strings.Builder // backs decoded strings; see intern
}

// String arena chunk sizes: the first chunk is small so the IDs at the front of a message pin
// little memory when kept; later chunks double up to a cap that bounds what one retained
// string can pin.
const (
	arenaFirstChunk = 256
	arenaMaxChunk   = 4 << 10
	arenaMaxString  = arenaMaxChunk / 4
)

func (d *decoder) remaining() int { return len(d.buf) - d.pos }

func (d *decoder) byte() (byte, error) {
	if d.pos >= len(d.buf) {
		return 0, TruncatedError{}
	}
	b := d.buf[d.pos]
	d.pos++
	return b, nil
}

// uvarint reads an unsigned LEB128 varint: at most 10 bytes, the 10th 0 or 1, and no
// redundant trailing zero group.
func (d *decoder) uvarint() (uint64, error) {
	buf, i := d.buf, d.pos
	if i < len(buf) && buf[i] < 0x80 {
		d.pos = i + 1
		return uint64(buf[i]), nil
	}
	var x uint64
	for n := 0; n < binary.MaxVarintLen64; n++ {
		if i >= len(buf) {
			return 0, TruncatedError{}
		}
		b := buf[i]
		i++
		if n == binary.MaxVarintLen64-1 && b > 1 {
			return 0, VarintOverflowError{}
		}
		x |= uint64(b&0x7f) << (7 * n)
		if b < 0x80 {
			if b == 0 && n > 0 {
				return 0, NonCanonicalVarintError{}
			}
			d.pos = i
			return x, nil
		}
	}
	return 0, VarintOverflowError{}
}

func (d *decoder) uvarintMax(limit uint64, typ string) (uint64, error) {
	x, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if x > limit {
		return 0, OutOfRangeError{Type: typ}
	}
	return x, nil
}

func (d *decoder) zigzag() (int64, error) {
	u, err := d.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

func (d *decoder) bool() (bool, error) {
	b, err := d.byte()
	if err != nil {
		return false, err
	}
	if b > 1 {
		return false, InvalidBoolError{Byte: b}
	}
	return b == 1, nil
}

func (d *decoder) f32() (float32, error) {
	if d.remaining() < 4 {
		return 0, TruncatedError{}
	}
	bits := binary.LittleEndian.Uint32(d.buf[d.pos:])
	d.pos += 4
	return math.Float32frombits(bits), nil
}

// span reads a varint length and returns that many bytes as a sub-slice of the frame whose
// capacity ends with it, so a handler appending to it cannot overwrite the next field.
func (d *decoder) span() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(d.remaining()) {
		return nil, TruncatedError{}
	}
	if n == 0 {
		return nil, nil
	}
	end := d.pos + int(n)
	b := d.buf[d.pos:end:end]
	d.pos = end
	return b, nil
}

func (d *decoder) str() (string, error) {
	b, err := d.span()
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", InvalidUTF8Error{}
	}
	return d.intern(b), nil
}

// intern copies b into the decoder's string arena and returns a string over the copy, so a
// message with a thousand paths costs a handful of allocations instead of a thousand. A
// strings.Builder only ever appends, so the bytes behind a returned string are never written
// again; a fresh Builder starts each chunk. Strings never alias the frame, so a kept ID does
// not pin a 512 KiB payload.
func (d *decoder) intern(b []byte) string {
	n := len(b)
	switch {
	case n == 0:
		return ""
	case n > arenaMaxString:
		return string(b)
	}
	if c := d.arena.Cap(); c-d.arena.Len() < n {
		size := arenaFirstChunk
		if c > 0 {
			size = min(2*c, arenaMaxChunk)
		}
		d.arena = strings.Builder{}
		d.arena.Grow(size)
	}
	start := d.arena.Len()
	d.arena.Write(b)
	return d.arena.String()[start:]
}

// count reads a sequence length and refuses it before allocation when the remaining bytes
// cannot hold that many items of at least minItem bytes each (gradient-protocol §2.2: a count
// beyond the remaining bytes is truncated; the per-item minimum only tightens the same
// bound).
func (d *decoder) count(minItem int) (int, error) {
	n, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64(d.remaining()/max(minItem, 1)) {
		return 0, TruncatedError{}
	}
	return int(n), nil
}
