package wsconn

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Reader is the receiving half of a Conn, owned by one read loop: Read, EnterSession and the
// agreement they may run must not be called concurrently.
type Reader[R wire.Message] struct {
	s      *socket
	decode func(frame []byte, version uint16) (R, error)
}

// Read returns the next message, running version agreement first if needed. []byte fields
// of the message alias its frame, which stays valid until release is called; release is
// optional (an unreleased frame is garbage collected) and must come after the last use of
// the message. release is never nil, so `defer release()` is always safe.
//
// Text messages are skipped once EnterSession was called; before that one closes the socket
// with 1003 and fails with ErrTextMessage. A frame over the cap closes the socket (1002
// during the handshake, 1009 after EnterSession) and fails with ErrMessageTooBig without being
// decoded; on an accepted socket that happens as soon as a frame header declares it.
// A frame that does not decode fails with a *wire.DecodeError (errors.As); the socket stays
// open so the caller can answer "400 malformed message" before closing.
func (r *Reader[R]) Read(ctx context.Context) (m R, release func(), err error) {
	v, err := r.s.agree(ctx)
	if err != nil {
		return m, noRelease, err
	}
	frame, release, err := r.s.readFrame(ctx)
	if err != nil {
		return m, noRelease, err
	}
	m, err = r.decode(frame, v)
	if err != nil {
		release()
		return m, noRelease, fmt.Errorf("wsconn: %w", err)
	}
	return m, release, nil
}

// EnterSession ends the handshake for reads: the cap rises from 64 KiB to the session cap
// (8 MiB, or Options.SessionReadLimit). The session driver calls it once the handshake has
// succeeded, before reading the first session message.
func (r *Reader[R]) EnterSession() { r.s.enterSession() }

// Version is the agreed protocol version, or 0 before agreement has succeeded.
func (r *Reader[R]) Version() uint16 { return r.s.agreedVersion() }

const (
	// smallFrameSize is the reader's reusable scratch buffer: frames that fit are copied out
	// (a control message costs one small allocation) and the scratch stays.
	smallFrameSize = 32 << 10
	// pooledFrameSize fits a full bulk chunk with its metadata, so chunk frames are read into
	// pooled buffers that release hands back.
	pooledFrameSize = wire.BulkChunkSize + 16<<10
)

func noRelease() {}

// frameBuf is a pooled frame buffer. gen makes release idempotent: a stale release from a
// message whose buffer was already recycled does nothing.
type frameBuf struct {
	b   []byte
	gen atomic.Uint64
}

var framePool = sync.Pool{New: func() any { return &frameBuf{b: make([]byte, pooledFrameSize)} }}

func (fb *frameBuf) releaser() func() {
	gen := fb.gen.Load()
	return func() {
		if fb.gen.CompareAndSwap(gen, gen+1) {
			framePool.Put(fb)
		}
	}
}

// readCap is the cap in force when a frame's read began.
type readCap struct {
	limit   int64
	session bool
}

// readFrame returns the next binary frame under the current cap. Text messages are skipped
// once the session runs; before that a text message closes the socket with 1003.
func (s *socket) readFrame(ctx context.Context) ([]byte, func(), error) {
	for {
		rc := readCap{session: s.inSession.Load(), limit: s.readLimit.Load()}
		typ, mr, err := s.ws.Reader(ctx)
		if err != nil {
			return nil, nil, s.readFailure(err, rc)
		}
		if typ == websocket.MessageBinary {
			return s.readBinary(mr, rc)
		}
		if !rc.session {
			return nil, nil, s.textRefused()
		}
		if err := s.skipMessage(mr, rc); err != nil {
			return nil, nil, err
		}
		s.log.Debug("ignored a text message")
	}
}

// readFailure ends the socket after a failed read: when a frame header declared a message
// over the cap, that is the failure (1002 or 1009, at once); anything else is the socket's.
func (s *socket) readFailure(err error, rc readCap) error {
	if s.bc != nil && s.bc.declaredOverCap() {
		return s.tooBig(rc)
	}
	return s.ioFailure("read", err)
}

// textRefused closes the socket for a text message before the session runs: no gradient
// peer sends one, and waiting for a binary frame behind it would hold the connection until
// the handshake deadline.
func (s *socket) textRefused() error {
	s.log.Warn("closing connection: text message before the session", "close_code", CloseUnsupportedData)
	s.fail(CloseUnsupportedData, "text messages are not part of the protocol", ErrTextMessage)
	return fmt.Errorf("wsconn: %w", ErrTextMessage)
}

// readBinary reads one message into the scratch buffer, moving to a pooled buffer when it
// outgrows it. It never holds more than rc.limit+1 bytes: the extra byte proves a frame is
// over the cap without reading the rest.
func (s *socket) readBinary(mr io.Reader, rc readCap) ([]byte, func(), error) {
	small := s.scratch[:min(int64(len(s.scratch)), rc.limit+1)]
	n, err := io.ReadFull(mr, small)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return bytes.Clone(small[:n]), noRelease, nil
	case err != nil:
		return nil, nil, s.readFailure(err, rc)
	case int64(n) > rc.limit:
		return nil, nil, s.tooBig(rc)
	}
	fb := framePool.Get().(*frameBuf)
	frame, err := s.readRest(mr, append(fb.b[:0], small...), rc)
	if cap(frame) != cap(fb.b) { // grew past the pooled size: the pooled buffer is free again
		framePool.Put(fb)
		return frame, noRelease, err
	}
	if err != nil {
		framePool.Put(fb)
		return nil, nil, err
	}
	return frame, fb.releaser(), nil
}

// readRest reads the rest of a message into buf, growing it up to rc.limit+1 bytes.
func (s *socket) readRest(mr io.Reader, buf []byte, rc readCap) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), rc.limit+1))
			copy(grown, buf)
			buf = grown
		}
		end := min(int64(cap(buf)), rc.limit+1)
		n, err := mr.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		switch {
		case int64(len(buf)) > rc.limit:
			return nil, s.tooBig(rc)
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return nil, s.readFailure(err, rc)
		}
	}
}

// skipMessage reads and drops a text message, still under the cap.
func (s *socket) skipMessage(mr io.Reader, rc readCap) error {
	var total int64
	for {
		n, err := mr.Read(s.scratch)
		total += int64(n)
		switch {
		case total > rc.limit:
			return s.tooBig(rc)
		case err == io.EOF:
			return nil
		case err != nil:
			return s.readFailure(err, rc)
		}
	}
}

// tooBig closes the socket for a frame over the cap: 1002 during the handshake
// (gradient-protocol §1.3), 1009 after it (gradient-protocol §1.4).
func (s *socket) tooBig(rc readCap) error {
	code, reason := websocket.StatusCode(CloseProtocolError), fmt.Sprintf("handshake message over %d bytes", rc.limit)
	if rc.session {
		code, reason = CloseMessageTooBig, fmt.Sprintf("message over %d bytes", rc.limit)
	}
	err := fmt.Errorf("wsconn: frame over %d bytes: %w", rc.limit, ErrMessageTooBig)
	s.log.Warn("closing connection: frame over the size cap", "limit", rc.limit, "close_code", int(code))
	s.fail(code, reason, err)
	return err
}
