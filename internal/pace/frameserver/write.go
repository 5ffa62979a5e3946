package frameserver

import (
	"errors"
	"hash"
	"io"
	"math"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Write batching: a reply whose payload is at most coalesceMax is copied
// into the connection's pending buffer (flushed before the next blocking
// read, or once it passes flushAt); a larger one goes out at once as one
// writev. writeChunk bounds each write so WriteTimeout means "no progress
// for this long" even for a 256 MiB reply.
const (
	coalesceMax = 16 << 10
	flushAt     = 32 << 10
	writeChunk  = 4 << 20
)

var pendingPool = sync.Pool{New: func() any {
	b := make([]byte, 0, flushAt+coalesceMax+wire.ReplyHeaderLen+wire.SealTagLen)
	return &b
}}

var errReplyTooLong = errors.New("frameserver: reply longer than a u32 payload length")

// writeReply writes a handler's terminal reply.
func (c *Conn) writeReply(r Reply) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeFrameLocked(r.Status, r.Payload, r.Body, r.BodyLen)
}

// writeRefusal writes an Error reply the server decided itself, built in
// a reusable buffer (a refusal is small, so it is copied into the pending
// buffer before this returns).
func (c *Conn) writeRefusal(r wire.Refusal) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.refusal = wire.AppendErrorPayload(c.refusal[:0], r)
	return c.writeFrameLocked(wire.StatusError, c.refusal, nil, 0)
}

// interim writes a Progress or Push frame immediately.
func (c *Conn) interim(status wire.Status, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if !c.interimOK.Has(status) {
		return ErrNoInterim
	}
	if err := c.writeFrameLocked(status, payload, nil, 0); err != nil {
		return err
	}
	return c.flushLocked()
}

// writeFrameLocked writes one reply frame: header, payload, streamed body
// and, on a sealed connection, the tag.
func (c *Conn) writeFrameLocked(status wire.Status, payload []byte, body io.Reader, bodyLen uint32) error {
	if c.writeErr != nil {
		return c.writeErr
	}
	total := uint64(len(payload)) + uint64(bodyLen)
	if total > math.MaxUint32 {
		return c.fail(errReplyTooLong)
	}
	var mac hash.Hash
	if c.sealer != nil {
		mac = c.sealer.NextWriteMAC()
	}
	pending := c.pendingLocked()
	start := len(*pending)
	*pending = wire.AppendReplyHeader(*pending, wire.ReplyHeader{Status: status, PayloadLen: uint32(total)})
	if mac != nil {
		mac.Write((*pending)[start:])
		mac.Write(payload)
	}
	if body == nil && len(payload) <= coalesceMax {
		*pending = append(*pending, payload...)
		return c.sealAndMaybeFlush(mac)
	}
	if err := c.writeLarge(*pending, payload); err != nil {
		return err
	}
	*pending = (*pending)[:0]
	if body != nil {
		if err := c.copyBody(body, bodyLen, mac); err != nil {
			return err
		}
	}
	return c.sealAndMaybeFlush(mac)
}

func (c *Conn) sealAndMaybeFlush(mac hash.Hash) error {
	pending := c.pendingLocked()
	if mac != nil {
		*pending = mac.Sum(*pending)
	}
	if len(*pending) >= flushAt {
		return c.flushLocked()
	}
	return nil
}

// writeLarge sends prefix (pending replies and this header) and the
// payload's first chunk in one writev, then the rest chunk by chunk.
func (c *Conn) writeLarge(prefix, payload []byte) error {
	first := payload[:min(len(payload), writeChunk)]
	c.bufArr = [2][]byte{prefix, first}
	c.bufs = c.bufArr[:]
	c.raw.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
	_, err := c.bufs.WriteTo(c.raw)
	c.bufArr = [2][]byte{}
	if err != nil {
		return c.fail(err)
	}
	for rest := payload[len(first):]; len(rest) > 0; {
		chunk := rest[:min(len(rest), writeChunk)]
		c.raw.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
		if _, err := c.raw.Write(chunk); err != nil {
			return c.fail(err)
		}
		rest = rest[len(chunk):]
	}
	return nil
}

// copyBody streams n bytes of body in chunks. Unsealed, each chunk is an
// io.CopyN onto the socket, which a TCP connection serves with sendfile
// when body is an *os.File. A body that ends early leaves the stream out
// of sync, so the connection is failed.
func (c *Conn) copyBody(body io.Reader, n uint32, mac hash.Hash) error {
	var dst io.Writer = c.raw
	if mac != nil {
		dst = io.MultiWriter(c.raw, mac)
	}
	for left := int64(n); left > 0; {
		step := min(left, writeChunk)
		c.raw.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
		if _, err := io.CopyN(dst, body, step); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return c.fail(err)
		}
		left -= step
	}
	return nil
}

// flush writes pending replies.
func (c *Conn) flush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.flushLocked()
}

func (c *Conn) flushLocked() error {
	if c.writeErr != nil {
		return c.writeErr
	}
	if c.wbuf == nil || len(*c.wbuf) == 0 {
		return nil
	}
	c.raw.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
	_, err := c.raw.Write(*c.wbuf)
	*c.wbuf = (*c.wbuf)[:0]
	if err != nil {
		return c.fail(err)
	}
	return nil
}

// pendingLocked returns the pending-reply buffer, taking one from the pool
// on a connection's first reply.
func (c *Conn) pendingLocked() *[]byte {
	if c.wbuf == nil {
		c.wbuf = pendingPool.Get().(*[]byte)
	}
	return c.wbuf
}

func (c *Conn) releaseWriteBuffer() {
	if c.wbuf != nil {
		*c.wbuf = (*c.wbuf)[:0]
		pendingPool.Put(c.wbuf)
		c.wbuf = nil
	}
}

// fail records the first write error; every later write returns it.
func (c *Conn) fail(err error) error {
	if c.writeErr == nil {
		c.writeErr = err
	}
	return c.writeErr
}
