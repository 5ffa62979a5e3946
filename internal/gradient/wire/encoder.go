package wire

import (
	"encoding/binary"
	"math"
	"unicode/utf8"
)

// encoder appends one value's encoding for one protocol version to buf.
type encoder struct {
	buf     []byte
	version uint16
}

func (e *encoder) uvarint(x uint64) {
	if x < 0x80 {
		e.buf = append(e.buf, byte(x))
		return
	}
	e.buf = binary.AppendUvarint(e.buf, x)
}

func (e *encoder) zigzag(n int64) { e.uvarint(uint64(n<<1) ^ uint64(n>>63)) }

func (e *encoder) bool(b bool) {
	if b {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

func (e *encoder) f32(f float32) {
	e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(f))
}

// str refuses invalid UTF-8 here, where the bug is, instead of letting the peer reject the
// frame and end the session.
func (e *encoder) str(s string) error {
	if !utf8.ValidString(s) {
		return &EncodeError{Type: "str", Version: e.version, Reason: "string is not valid UTF-8"}
	}
	e.uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
	return nil
}

func (e *encoder) bytes(b []byte) {
	e.uvarint(uint64(len(b)))
	e.buf = append(e.buf, b...)
}
