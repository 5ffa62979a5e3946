package sealedconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// sealing says which frames of one exchange carry tags, under which
// Sealer.
type sealing struct {
	sealer  *nodeproof.Sealer
	request bool                   // the request is tagged
	reply   func(wire.Status) bool // which replies are tagged
}

var (
	// unsealed: NODE-CHALLENGE.
	unsealed = sealing{reply: func(wire.Status) bool { return false }}
	// okSealed: PROVE-NODE, whose Ok reply is the first sealed frame and
	// whose refusal is not sealed.
	okSealed = func(s *nodeproof.Sealer) sealing {
		return sealing{sealer: s, reply: func(st wire.Status) bool { return st == wire.StatusOk }}
	}
	// allSealed: every exchange after the proof.
	allSealed = func(s *nodeproof.Sealer) sealing {
		return sealing{sealer: s, request: true, reply: func(wire.Status) bool { return true }}
	}
)

// exchange writes one request and reads its terminal reply under ctx. Any
// failure but a refusal breaks the Conn.
func (c *Conn) exchange(ctx context.Context, op wire.Op, payload []byte, seal sealing) (wire.Status, []byte, error) {
	info, ok := wire.Lookup(op)
	if !ok {
		return 0, nil, fmt.Errorf("%s is not a live opcode", op)
	}
	if uint64(len(payload)) > math.MaxUint32 {
		return 0, nil, fmt.Errorf("%s: %d-byte payload does not fit a frame", info.Name, len(payload))
	}
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	if d, ok := ctx.Deadline(); ok {
		c.raw.SetDeadline(d)
	} else {
		c.raw.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { c.raw.SetDeadline(aLongTimeAgo) })
	status, reply, err := c.roundTrip(info, payload, seal)
	if !stop() && err == nil {
		// Cancelled as the reply arrived: the deadline may be moved under
		// the next request, so this Conn ends here.
		err = ctx.Err()
	}
	var refusal wire.Refusal
	if err != nil && !errors.As(err, &refusal) {
		err = contextCause(ctx, err)
		c.broken = fmt.Errorf("%w: %w", ErrClosed, err)
		c.raw.Close()
	}
	return status, reply, err
}

func (c *Conn) roundTrip(info wire.OpInfo, payload []byte, seal sealing) (wire.Status, []byte, error) {
	if err := c.writeRequest(info.Op, payload, seal); err != nil {
		return 0, nil, fmt.Errorf("%s: write: %w", info.Name, err)
	}
	return c.readReply(info, seal)
}

// writeRequest writes header, payload and (once sealed) tag in one write.
func (c *Conn) writeRequest(op wire.Op, payload []byte, seal sealing) error {
	c.wbuf = wire.AppendRequestHeader(c.wbuf[:0], wire.NewRequestHeader(op, uint32(len(payload))))
	c.wbuf = append(c.wbuf, payload...)
	if seal.request {
		c.wbuf = seal.sealer.AppendTag(c.wbuf, c.wbuf)
	}
	_, err := c.raw.Write(c.wbuf)
	return err
}

// readReply reads frames until the terminal one, skipping (but checking)
// Progress and Push frames. Each header is judged before its payload is
// allocated.
func (c *Conn) readReply(info wire.OpInfo, seal sealing) (wire.Status, []byte, error) {
	for {
		var hdr [wire.ReplyHeaderLen]byte
		h, err := wire.ReadReplyHeader(c.br, &hdr)
		if err != nil {
			return 0, nil, fmt.Errorf("%s: read reply: %w", info.Name, err)
		}
		if err := wire.CheckReplyHeader(info, h, c.maxReply); err != nil {
			return 0, nil, err
		}
		payload := make([]byte, h.PayloadLen)
		if _, err := io.ReadFull(c.br, payload); err != nil {
			return 0, nil, fmt.Errorf("%s: read reply: %w", info.Name, unexpected(err))
		}
		if seal.reply(h.Status) {
			if err := c.checkTag(seal.sealer, hdr[:], payload); err != nil {
				return 0, nil, fmt.Errorf("%s reply: %w", info.Name, err)
			}
		}
		if h.Status.Terminal() {
			return h.Status, payload, terminal(h.Status, payload)
		}
	}
}

func (c *Conn) checkTag(sealer *nodeproof.Sealer, header, payload []byte) error {
	var tag [nodeproof.TagLen]byte
	if _, err := io.ReadFull(c.br, tag[:]); err != nil {
		return fmt.Errorf("read tag: %w", unexpected(err))
	}
	if err := sealer.CheckTag(tag[:], header, payload); err != nil {
		if c.counters != nil {
			c.counters.SealedFramesRefused.Add(1)
		}
		return err
	}
	return nil
}

// terminal turns an Error reply into its Refusal, as wire.ReadReply does.
func terminal(status wire.Status, payload []byte) error {
	switch {
	case status == wire.StatusError:
		r, err := wire.ParseErrorPayload(payload)
		if err != nil {
			return err
		}
		return r
	case status == wire.StatusMiss && len(payload) != 0:
		return fmt.Errorf("%w: Miss reply with a %d-byte payload", wire.ErrMalformedFrame, len(payload))
	}
	return nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// contextCause names the context when it ended the exchange. The socket
// deadline is the context's own, so it can fire a moment before the
// context's timer does.
func contextCause(ctx context.Context, err error) error {
	ctxErr := ctx.Err()
	if _, hasDeadline := ctx.Deadline(); ctxErr == nil && hasDeadline && errors.Is(err, os.ErrDeadlineExceeded) {
		ctxErr = context.DeadlineExceeded
	}
	if ctxErr == nil {
		return err
	}
	return fmt.Errorf("%w (%w)", ctxErr, err)
}
