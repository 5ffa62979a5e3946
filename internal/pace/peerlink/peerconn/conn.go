package peerconn

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
)

// ErrClosed wraps every error of a Conn that has ended, beside the reason
// it ended (a peerlink sentinel, io.EOF when the peer closed, or nothing
// when Close ended it).
var ErrClosed = errors.New("consensus link closed")

// growStep is how much of a large message's buffer is allocated ahead of
// the bytes that fill it, so that a header alone never commits the reader
// to its declared length.
const growStep = 256 << 10

// Conn is a proven consensus link. One goroutine may read while another
// writes; Close and Err may be called from any.
type Conn struct {
	ep  *Endpoint
	raw net.Conn
	s   *peerlink.Session

	rmu sync.Mutex // one reader at a time
	br  *bufio.Reader
	hdr [peerlink.HeaderLen]byte
	tag [peerlink.TagLen]byte

	wmu sync.Mutex // one writer at a time

	mu    sync.Mutex
	ended error
}

func newConn(e *Endpoint, raw net.Conn, br *bufio.Reader, s *peerlink.Session) *Conn {
	return &Conn{ep: e, raw: raw, br: br, s: s}
}

// Peer is the member the handshake proved at the other end.
func (c *Conn) Peer() peerlink.Peer { return c.s.Peer() }

// Direction is the session the dialler asked for: on VoterToVoter only the
// dialler sends.
func (c *Conn) Direction() peerlink.Direction { return c.s.Direction() }

// Role is this end's.
func (c *Conn) Role() peerlink.Role { return c.s.Role() }

// RemoteAddr is the other end's address, for logs only: the address proves
// nothing (pace-consensus §7.3.5).
func (c *Conn) RemoteAddr() net.Addr { return c.raw.RemoteAddr() }

// ReadMessage reads the next message, checked as peerlink.Session.Open
// says. Any error ends the link; a refusal is counted once.
func (c *Conn) ReadMessage() ([]byte, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if err := c.Err(); err != nil {
		return nil, err
	}
	msg, err := c.read()
	if err != nil {
		return nil, c.end(err)
	}
	return msg, nil
}

func (c *Conn) read() ([]byte, error) {
	if _, err := io.ReadFull(c.br, c.hdr[:]); err != nil {
		return nil, err // io.EOF between frames: the peer closed
	}
	n, err := c.s.ReadHeader(c.hdr[:])
	if err != nil {
		return nil, err
	}
	payload, err := readPayload(c.br, n)
	if err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(c.br, c.tag[:]); err != nil {
		return nil, unexpected(err)
	}
	if err := c.s.Open(peerlink.Frame{Header: c.hdr[:], Payload: payload, Tag: c.tag[:]}); err != nil {
		return nil, err
	}
	return payload, nil
}

// readPayload reads n bytes, growing the buffer as they arrive rather than
// trusting the header with the whole allocation up front.
func readPayload(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, growStep))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(n-len(buf), cap(buf)))
		}
		m, err := r.Read(buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if err != nil && len(buf) < n {
			return nil, unexpected(err)
		}
	}
	return buf, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// WriteMessage sends one message, tagged, after asking the roster again. A
// message the link cannot carry (peerlink.ErrOneWay,
// peerlink.ErrMessageTooLarge) is refused and the link stays up; any other
// error ends it.
func (c *Conn) WriteMessage(msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.Err(); err != nil {
		return err
	}
	f, err := c.s.Seal(msg)
	switch {
	case errors.Is(err, peerlink.ErrOneWay), errors.Is(err, peerlink.ErrMessageTooLarge):
		return err
	case err != nil:
		return c.end(err)
	}
	bufs := net.Buffers{f.Header, f.Payload, f.Tag}
	if _, err := bufs.WriteTo(c.raw); err != nil {
		return c.end(err)
	}
	return nil
}

// Recheck asks the roster whether the link's keys still stand, ending the
// link (counted as withdrawn) if not: for a caller that has just applied a
// new state and would end idle links at once rather than at their next
// message.
func (c *Conn) Recheck() error {
	if err := c.Err(); err != nil {
		return err
	}
	if err := c.s.Standing(); err != nil {
		return c.end(err)
	}
	return nil
}

// SetReadDeadline and SetWriteDeadline bound the next reads or writes; one
// that expires ends the link (a frame may be half through).
func (c *Conn) SetReadDeadline(t time.Time) error { return c.raw.SetReadDeadline(t) }

// SetWriteDeadline: see SetReadDeadline.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.raw.SetWriteDeadline(t) }

// Err is why the link ended, or nil while it is up.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

// Close ends the link; Err is then ErrClosed alone.
func (c *Conn) Close() error {
	c.mu.Lock()
	first := c.ended == nil
	if first {
		c.ended = ErrClosed
	}
	c.mu.Unlock()
	if !first {
		return nil
	}
	return c.raw.Close()
}

// end records the first reason the link ended, closes it, and counts and
// logs that reason once.
func (c *Conn) end(err error) error {
	c.mu.Lock()
	if c.ended != nil {
		defer c.mu.Unlock()
		return c.ended
	}
	c.ended = fmt.Errorf("%w: %w", ErrClosed, err)
	ended := c.ended
	c.mu.Unlock()
	c.raw.Close()
	c.ep.counters.Count(c.s.Role(), err)
	if peerlink.Reason(err) != "" {
		c.ep.log.linkEnded(c.s, err)
	}
	return ended
}
