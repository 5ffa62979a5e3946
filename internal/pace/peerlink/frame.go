package peerlink

import (
	"encoding/binary"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
)

// Version is the link's wire version. Every frame's header carries it, the
// challenge's included, and both signatures cover it; there is no
// compatibility mode with another version (pace-consensus §7.3.5).
const Version = 5

// Magic opens every frame: "PRFT", pace Raft. Nothing else a consensus port
// hears (a 0xFC frame, HTTP, TLS) starts with it.
const Magic = "PRFT"

// Sizes of the framing.
const (
	// HeaderLen is magic, version, kind and the u32 BE payload length.
	HeaderLen = len(Magic) + 1 + 1 + 4
	// TagLen is the HMAC-SHA256 tag after a message frame's payload, not
	// counted in its length.
	TagLen = nodeproof.TagLen
	// NonceLen is each side's handshake nonce.
	NonceLen = nodeproof.NonceLen
	// EphemeralLen is an X25519 public key.
	EphemeralLen = nodeproof.EphemeralLen
	// SignatureLen is an Ed25519 signature.
	SignatureLen = 64
	// MaxHandshakePayload caps a challenge, proof or verdict. A proof is at
	// most 4·6 + 2·64 + 2·32 + 1 + 64 = 281 bytes; anything longer is not one.
	MaxHandshakePayload = 512
	// DefaultMaxMessage caps a Raft message when Member.MaxMessage is 0:
	// 64 MiB, room for a snapshot of the largest fleet state (4096 members,
	// 65536 revoked keys: a few MiB) many times over, while a proven peer
	// still cannot make the reader buffer more than that.
	DefaultMaxMessage = 64 << 20
)

// Kind says what a frame carries.
type Kind uint8

// Frame kinds, in the order a link sees them.
const (
	KindChallenge Kind = 1
	KindProof     Kind = 2
	KindVerdict   Kind = 3
	KindMessage   Kind = 4
)

// Header is a parsed frame header.
type Header struct {
	Kind Kind
	Len  uint32
}

// AppendHeader appends a frame header.
func AppendHeader(dst []byte, k Kind, n uint32) []byte {
	dst = append(dst, Magic...)
	dst = append(dst, Version, byte(k))
	return binary.BigEndian.AppendUint32(dst, n)
}

// ParseHeader judges a frame header before anything of its payload is read
// or allocated: ErrFrameBadMagic for bytes of another wire altogether,
// ErrFrameUnreadable for this wire at another version or an unknown kind,
// ErrFrameOverCap for a payload longer than its kind allows (maxMessage for
// a message, 0 meaning DefaultMaxMessage; MaxHandshakePayload otherwise).
func ParseHeader(b []byte, maxMessage uint32) (Header, error) {
	switch {
	case string(b[:min(len(b), len(Magic))]) != Magic[:min(len(b), len(Magic))]:
		return Header{}, ErrFrameBadMagic // judged on as many bytes as there are
	case len(b) < HeaderLen:
		return Header{}, fmt.Errorf("%w: %d-byte header", ErrFrameUnreadable, len(b))
	case b[len(Magic)] != Version:
		return Header{}, fmt.Errorf("%w: wire version %d, this link speaks %d", ErrFrameUnreadable, b[len(Magic)], Version)
	}
	h := Header{Kind: Kind(b[len(Magic)+1]), Len: binary.BigEndian.Uint32(b[len(Magic)+2:])}
	limit := uint32(MaxHandshakePayload)
	switch h.Kind {
	case KindChallenge, KindProof, KindVerdict:
	case KindMessage:
		limit = messageCap(maxMessage)
	default:
		return Header{}, fmt.Errorf("%w: frame kind %d", ErrFrameUnreadable, h.Kind)
	}
	if h.Len > limit {
		return Header{}, fmt.Errorf("%w: %d-byte payload, at most %d", ErrFrameOverCap, h.Len, limit)
	}
	return h, nil
}

func messageCap(maxMessage uint32) uint32 {
	if maxMessage == 0 {
		return DefaultMaxMessage
	}
	return maxMessage
}

// Frame is one message frame in three parts, so that a large payload is
// never copied to be framed: write Header, Payload and Tag in that order.
type Frame struct {
	Header  []byte
	Payload []byte
	Tag     []byte
}

// Append appends the frame's bytes as they go on the wire.
func (f Frame) Append(dst []byte) []byte {
	return append(append(append(dst, f.Header...), f.Payload...), f.Tag...)
}

// SplitFrame splits one whole message frame, as a socket would have read
// it, into its parts, judging the header as ParseHeader does.
func SplitFrame(b []byte, maxMessage uint32) (Frame, error) {
	h, err := ParseHeader(b, maxMessage)
	if err != nil {
		return Frame{}, err
	}
	if h.Kind != KindMessage {
		return Frame{}, fmt.Errorf("%w: a kind %d frame where a message belongs", ErrFrameUnreadable, h.Kind)
	}
	if uint64(len(b)) != uint64(HeaderLen)+uint64(h.Len)+TagLen {
		return Frame{}, fmt.Errorf("%w: %d bytes for a %d-byte message", ErrFrameUnreadable, len(b), h.Len)
	}
	end := HeaderLen + int(h.Len)
	return Frame{Header: b[:HeaderLen], Payload: b[HeaderLen:end], Tag: b[end:]}, nil
}
