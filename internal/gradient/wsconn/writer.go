package wsconn

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Writer is the sending half of a Conn. It is safe for concurrent use; share the pointer.
type Writer[S wire.Message] struct {
	s         *socket
	newReject func(code uint16, reason string) S
}

// Send encodes m for the agreed version and queues it on the lane wire.Lane picks. The first
// Send or Read runs agreement, which waits for the peer's version frame: a peer sends it on
// its own first Send or Read. It returns once the frame is queued, not written: a later write
// failure ends the socket (see Conn.Err). It fails with ErrStalled when the lane stays full
// for the stall timeout, with ErrMessageTooBig when m encodes over the session cap, with a
// *wire.EncodeError when m cannot be encoded at the agreed version, and with ErrClosed once
// the socket is shutting down.
func (w *Writer[S]) Send(ctx context.Context, m S) error {
	v, err := w.s.agree(ctx)
	if err != nil {
		return err
	}
	o, err := w.s.encode(m, v)
	if err != nil {
		return err
	}
	if err := w.s.lanes.enqueue(ctx, o); err != nil {
		putOutbound(o)
		if errors.Is(err, ErrClosed) {
			return w.s.closedErr()
		}
		return err
	}
	return nil
}

// Version is the agreed protocol version, or 0 before agreement has succeeded.
func (w *Writer[S]) Version() uint16 { return w.s.agreedVersion() }

// Close drains the queues (every frame queued before Close is written), then closes the
// WebSocket with 1000. ctx bounds the drain and the close handshake; when it ends first the
// connection is dropped and queued frames are lost. Later calls wait for the first and
// return nil.
func (w *Writer[S]) Close(ctx context.Context) error {
	return w.s.close(ctx, CloseNormal, "")
}

// Reject sends a Reject{code, reason} (ClientMessage::Reject or ServerMessage::Reject by
// role), drains, and closes with 1008 and the reason "<code> <reason>"
// (gradient-server §10.4).
func (w *Writer[S]) Reject(ctx context.Context, code uint16, reason string) error {
	sendErr := w.Send(ctx, w.newReject(code, reason))
	closeErr := w.s.close(ctx, ClosePolicyViolation, rejectCloseReason(code, reason))
	return errors.Join(sendErr, closeErr)
}

// Abort drops the connection at once, without a close handshake; queued frames are lost.
func (w *Writer[S]) Abort() { w.s.abort(ErrClosed) }

// maxCloseReason is the room for a reason in a close frame (125 bytes minus the code).
const maxCloseReason = 123

// rejectCloseReason is "<code> <reason>", cut at a rune boundary to fit a close frame.
func rejectCloseReason(code uint16, reason string) string {
	s := strconv.Itoa(int(code)) + " " + reason
	if len(s) <= maxCloseReason {
		return s
	}
	i := maxCloseReason
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// encode encodes m into a pooled frame for its lane and applies the session cap.
func (s *socket) encode(m wire.Message, v uint16) (*outbound, error) {
	o := getOutbound(wire.Lane(m))
	frame, err := wire.Append(o.frame[:0], m, v)
	if err != nil {
		putOutbound(o)
		return nil, fmt.Errorf("wsconn: encode %T: %w", m, err)
	}
	o.frame = frame
	if int64(len(frame)) > s.sessionLimit {
		putOutbound(o)
		return nil, fmt.Errorf("wsconn: %T encodes to %d bytes, over the %d-byte cap: %w",
			m, len(frame), s.sessionLimit, ErrMessageTooBig)
	}
	return o, nil
}

// writeBatch writes one batch and flushes it. With a batchConn the batch leaves in as few
// syscalls as its size allows; without one the library flushes every frame itself.
func (s *socket) writeBatch(batch []*outbound) error {
	if h := s.hooks; h != nil && h.beforeBatch != nil {
		h.beforeBatch(batch[0].lane, len(batch))
	}
	if s.bc != nil {
		s.bc.openBatch()
	}
	for _, o := range batch {
		// No per-write context: a blocked write ends when the socket is closed, and a
		// cancellable context would cost the library a timer per frame.
		if err := s.ws.Write(context.Background(), websocket.MessageBinary, o.frame); err != nil {
			return s.ioFailure("write", err)
		}
	}
	if s.bc != nil {
		if err := s.bc.flush(); err != nil {
			return s.ioFailure("flush", err)
		}
	}
	if h := s.hooks; h != nil && h.afterBatch != nil {
		stats := batchStats{lane: batch[0].lane, frames: len(batch), bytes: batchBytes(batch)}
		for _, o := range batch {
			stats.mixed = stats.mixed || o.lane != stats.lane
		}
		h.afterBatch(stats)
	}
	return nil
}

// testHooks are seams for the lane tests; production leaves them nil.
type testHooks struct {
	beforeBatch func(lane wire.LaneKind, frames int) // may block to hold the writer
	afterBatch  func(batchStats)
}

type batchStats struct {
	lane   wire.LaneKind
	frames int
	bytes  int
	mixed  bool // frames of both lanes in one batch (must never happen)
}
