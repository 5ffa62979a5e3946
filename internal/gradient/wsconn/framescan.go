package wsconn

import (
	"encoding/binary"
	"math"
)

// frameScan follows the WebSocket frame headers (RFC 6455, section 5.2) of an inbound byte
// stream that the library parses, so that a data message whose headers declare more than the
// read cap is refused as soon as the header arrives: the library itself only counts payload
// bytes as they come, so a header declaring 2^62 bytes followed by silence would otherwise
// hold the connection until a deadline (gradient-protocol §1.3). It does no I/O; batchConn
// feeds it.
type frameScan struct {
	hdr  [maxFrameHeader]byte
	have int   // header bytes collected so far
	skip int64 // payload bytes of the current frame still to pass over

	// message is the declared size of the data message being received, its fragments summed
	// (saturating at math.MaxInt64).
	message int64
}

// maxFrameHeader is the longest frame header: 2 bytes, an 8-byte length and a 4-byte mask.
const maxFrameHeader = 14

// feed scans p, the next bytes of the stream, and reports whether a data message declared
// more than limit(). limit is asked once per completed header, so a cap that changes between
// messages (EnterSession) applies from the next header on.
func (s *frameScan) feed(p []byte, limit func() int64) (over bool) {
	for len(p) > 0 {
		if s.skip > 0 {
			n := int64(len(p))
			if n > s.skip {
				n = s.skip
			}
			s.skip -= n
			p = p[n:]
			continue
		}
		s.hdr[s.have] = p[0]
		s.have++
		p = p[1:]
		if s.have < headerLen(s.hdr[:s.have]) {
			continue
		}
		if s.header(limit) {
			over = true
		}
	}
	return over
}

// headerLen is the full length of a header whose first bytes are b: 2 until the length byte
// is known.
func headerLen(b []byte) int {
	if len(b) < 2 {
		return 2
	}
	n := 2
	switch b[1] & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if b[1]&0x80 != 0 {
		n += 4
	}
	return n
}

// header completes one header: it sets the payload to skip and, for a data frame, adds its
// length to the message, reporting whether the message is over the cap.
func (s *frameScan) header(limit func() int64) bool {
	h := s.hdr[:s.have]
	s.have = 0
	length := payloadLen(h)
	s.skip = length
	opcode := h[0] & 0x0f
	if opcode >= 8 {
		return false // control frames: the library allows them 125 bytes and checks that itself
	}
	if opcode != 0 {
		s.message = 0 // a new message; a continuation (0) adds to the one under way
	}
	if s.message > math.MaxInt64-length {
		s.message = math.MaxInt64
	} else {
		s.message += length
	}
	return s.message > limit()
}

// payloadLen is a complete header's payload length; a 64-bit length with its top bit set
// (which RFC 6455 forbids) reads as math.MaxInt64, over any cap.
func payloadLen(h []byte) int64 {
	switch n := h[1] & 0x7f; n {
	case 126:
		return int64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		v := binary.BigEndian.Uint64(h[2:10])
		if v > math.MaxInt64 {
			return math.MaxInt64
		}
		return int64(v)
	default:
		return int64(n)
	}
}
