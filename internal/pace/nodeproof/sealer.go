package nodeproof

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"hash"
)

// Sealer tags a connection's frames once a proof has agreed keys: the
// write side for frames this end sends, the read side for frames it
// receives, each with its own key and running sequence number. It
// implements frameserver.Sealer (the server installs it with
// Conn.InstallSealer) and offers AppendTag and CheckTag for a client that
// frames by hand.
//
// The read and write sides are independent: one goroutine may read while
// another writes, but each side is used by one goroutine at a time.
type Sealer struct {
	read, write macStream
}

// macStream is one direction: a keyed HMAC reused frame after frame and
// the sequence number of the next frame.
type macStream struct {
	mac    hash.Hash
	seq    uint64
	seqBuf [SeqLen]byte // scratch kept here so the MAC's Write does not allocate
	sum    [TagLen]byte
}

// NewSealer returns a sealer that checks frames under readKey and tags
// them under writeKey, both sequences starting at 0.
func NewSealer(readKey, writeKey [SessionKeyLen]byte) *Sealer {
	return &Sealer{
		read:  macStream{mac: hmac.New(sha256.New, readKey[:])},
		write: macStream{mac: hmac.New(sha256.New, writeKey[:])},
	}
}

// next returns the MAC for the next frame, already fed its sequence
// number. A sequence number never repeats: 2^64 frames are out of reach.
func (m *macStream) next() hash.Hash {
	binary.BigEndian.PutUint64(m.seqBuf[:], m.seq)
	m.seq++
	m.mac.Reset()
	m.mac.Write(m.seqBuf[:])
	return m.mac
}

// NextReadMAC returns the MAC the next received frame's header and payload
// are written into. It is valid until the next NextReadMAC.
func (s *Sealer) NextReadMAC() hash.Hash { return s.read.next() }

// NextWriteMAC returns the MAC the next sent frame's header and payload are
// written into. It is valid until the next NextWriteMAC.
func (s *Sealer) NextWriteMAC() hash.Hash { return s.write.next() }

// AppendTag appends the tag of the next sent frame, whose bytes are the
// concatenation of parts (typically header, payload).
func (s *Sealer) AppendTag(dst []byte, parts ...[]byte) []byte {
	mac := s.NextWriteMAC()
	for _, p := range parts {
		mac.Write(p)
	}
	return mac.Sum(dst)
}

// CheckTag checks the tag of the next received frame, whose bytes are the
// concatenation of parts, in constant time. A failure is ErrBadTag; the
// connection must then be closed, since its read sequence is spent.
func (s *Sealer) CheckTag(tag []byte, parts ...[]byte) error {
	mac := s.NextReadMAC()
	for _, p := range parts {
		mac.Write(p)
	}
	if !hmac.Equal(mac.Sum(s.read.sum[:0]), tag) {
		return ErrBadTag
	}
	return nil
}
