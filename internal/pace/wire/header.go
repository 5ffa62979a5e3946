package wire

import (
	"encoding/binary"
	"strconv"
)

// Wire constants (pace-wire §1.2, pace-wire §1.3, pace-wire §5.1).
const (
	// Magic is the first byte of every request frame.
	Magic byte = 0xFC
	// Version is the wire version this build speaks and sends.
	Version uint8 = 1
	// MinVersion is the oldest wire version this build accepts. Upstream's
	// policy is a flag day: every peer runs the same version.
	MinVersion uint8 = 1

	// RequestHeaderLen is the size of a request header: magic, version, op,
	// u32 BE payload length.
	RequestHeaderLen = 7
	// ReplyHeaderLen is the size of a reply header: status, u32 BE payload
	// length.
	ReplyHeaderLen = 5
)

// RequestHeader is the 7-byte header of a request frame.
type RequestHeader struct {
	Magic      byte
	Version    uint8
	Op         Op
	PayloadLen uint32
}

// NewRequestHeader returns the header this build sends for op.
func NewRequestHeader(op Op, payloadLen uint32) RequestHeader {
	return RequestHeader{Magic: Magic, Version: Version, Op: op, PayloadLen: payloadLen}
}

// ParseRequestHeader reads a request header from the first 7 bytes of b. It
// checks only the length; the magic and version are judged by Decide.
func ParseRequestHeader(b []byte) (RequestHeader, error) {
	if len(b) < RequestHeaderLen {
		return RequestHeader{}, ErrShortHeader
	}
	return RequestHeader{
		Magic:      b[0],
		Version:    b[1],
		Op:         Op(b[2]),
		PayloadLen: binary.BigEndian.Uint32(b[3:7]),
	}, nil
}

// AppendRequestHeader appends the 7 header bytes of h to dst.
func AppendRequestHeader(dst []byte, h RequestHeader) []byte {
	dst = append(dst, h.Magic, h.Version, byte(h.Op))
	return binary.BigEndian.AppendUint32(dst, h.PayloadLen)
}

// ReplyHeader is the 5-byte header of a reply frame.
type ReplyHeader struct {
	Status     Status
	PayloadLen uint32
}

// ParseReplyHeader reads a reply header from the first 5 bytes of b. An
// unknown status byte is ErrUnknownStatus (a protocol failure at a client).
func ParseReplyHeader(b []byte) (ReplyHeader, error) {
	if len(b) < ReplyHeaderLen {
		return ReplyHeader{}, ErrShortHeader
	}
	h := ReplyHeader{Status: Status(b[0]), PayloadLen: binary.BigEndian.Uint32(b[1:5])}
	if !h.Status.Known() {
		return h, ErrUnknownStatus
	}
	return h, nil
}

// AppendReplyHeader appends the 5 header bytes of h to dst.
func AppendReplyHeader(dst []byte, h ReplyHeader) []byte {
	dst = append(dst, byte(h.Status))
	return binary.BigEndian.AppendUint32(dst, h.PayloadLen)
}

// PutReplyHeader writes h into b[:5] without allocating.
func PutReplyHeader(b []byte, h ReplyHeader) {
	b[0] = byte(h.Status)
	binary.BigEndian.PutUint32(b[1:5], h.PayloadLen)
}

// Status is a reply's first byte (pace-wire §1.5).
type Status uint8

// Reply statuses.
const (
	StatusMiss     Status = 0x00 // lookup found nothing; empty payload
	StatusOk       Status = 0x01 // success; verb-specific body
	StatusError    Status = 0x02 // refusal: [u8 code][message]
	StatusProgress Status = 0x03 // COMPILE liveness pulse; never terminal
	StatusPush     Status = 0x04 // SUBSCRIBE stream frame; never terminal
)

var statusNames = [...]string{"Miss", "Ok", "Error", "Progress", "Push"}

// Known reports whether s is one of the five statuses.
func (s Status) Known() bool { return int(s) < len(statusNames) }

// Terminal reports whether s ends a request's replies (Miss, Ok, Error).
func (s Status) Terminal() bool { return s <= StatusError }

func (s Status) String() string {
	if s.Known() {
		return statusNames[s]
	}
	return "status-0x" + strconv.FormatUint(uint64(s), 16)
}

// StatusSet is a set of statuses, one bit per status byte.
type StatusSet uint8

// Statuses builds a StatusSet.
func Statuses(ss ...Status) StatusSet {
	var set StatusSet
	for _, s := range ss {
		set |= 1 << s
	}
	return set
}

// Has reports whether s is in the set.
func (set StatusSet) Has(s Status) bool { return s.Known() && set&(1<<s) != 0 }
