package wsconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// socket is the untyped core both halves of a Conn share: agreement, read caps, the lanes and
// shutdown.
type socket struct {
	ws    *websocket.Conn
	bc    *batchConn // nil when wrapping a WebSocket this package did not set up
	log   *slog.Logger
	ours  wire.VersionRange
	hooks *testHooks

	sessionLimit int64
	readLimit    atomic.Int64
	inSession    atomic.Bool
	scratch      []byte // small-frame read buffer; one reader at a time (agreement, then Read)

	agreeStarted atomic.Bool
	agreed       chan struct{} // closed when agreement finished, either way
	version      uint16        // valid once agreed is closed
	agreeErr     error         // valid once agreed is closed

	lanes *lanes

	shutdownOnce sync.Once
	closing      chan struct{} // closed when shutdown starts: Sends fail from then on
	finished     chan struct{} // closed when the first shutdown has closed the WebSocket
	causeErr     error         // why the socket closed; set before closing is closed
}

func newSocket(ws *websocket.Conn, bc *batchConn, opts Options) *socket {
	opts = opts.withDefaults()
	// Caps are enforced in readFrame, so that the peer sees 1002 or 1009 as
	// gradient-protocol §1.4 says, never the library's own 1009 at its default 32 KiB.
	ws.SetReadLimit(-1)
	s := &socket{
		ws:           ws,
		bc:           bc,
		log:          opts.Logger,
		ours:         opts.Versions,
		hooks:        opts.hooks,
		sessionLimit: int64(opts.SessionReadLimit),
		scratch:      make([]byte, smallFrameSize),
		agreed:       make(chan struct{}),
		closing:      make(chan struct{}),
		finished:     make(chan struct{}),
	}
	s.readLimit.Store(wire.MaxHandshakeMessageSize)
	if bc != nil {
		bc.limit.Store(&s.readLimit)
	}
	s.lanes = newLanes(opts.StallTimeout, s.closing, s.writeBatch)
	return s
}

// enterSession switches reads from the handshake cap to the session cap.
func (s *socket) enterSession() {
	s.inSession.Store(true)
	s.readLimit.Store(s.sessionLimit)
}

func (s *socket) agreedVersion() uint16 {
	select {
	case <-s.agreed:
		if s.agreeErr == nil {
			return s.version
		}
	default:
	}
	return 0
}

// agree runs version agreement once (gradient-protocol §1.2); concurrent callers wait for its
// outcome.
func (s *socket) agree(ctx context.Context) (uint16, error) {
	select {
	case <-s.agreed:
		return s.agreement()
	default:
	}
	if s.agreeStarted.CompareAndSwap(false, true) {
		s.version, s.agreeErr = s.runAgreement(ctx)
		if s.agreeErr == nil {
			s.lanes.launch()
		}
		close(s.agreed)
		return s.version, s.agreeErr
	}
	select {
	case <-s.agreed:
		return s.agreement()
	case <-s.closing:
		return 0, s.closedErr()
	case <-ctx.Done():
		return 0, fmt.Errorf("wsconn: waiting for version agreement: %w", ctx.Err())
	}
}

// agreement is the finished agreement's outcome for callers after the first: a failure
// reads as ErrClosed wrapping the reason.
func (s *socket) agreement() (uint16, error) {
	if s.agreeErr != nil {
		return 0, s.closedErr()
	}
	return s.version, nil
}

// runAgreement sends our version frame, then reads the peer's first binary frame.
func (s *socket) runAgreement(ctx context.Context) (uint16, error) {
	select {
	case <-s.closing:
		return 0, s.closedErr()
	default:
	}
	if err := s.ws.Write(ctx, websocket.MessageBinary, wire.VersionFrame(s.ours)); err != nil {
		return 0, s.ioFailure("send version frame", err)
	}
	frame, release, err := s.readFrame(ctx)
	if err != nil {
		return 0, fmt.Errorf("wsconn: read peer version frame: %w", err)
	}
	v, err := wire.AgreeFrame(s.ours, frame)
	release()
	var agreement *wire.AgreementError
	if errors.As(err, &agreement) {
		s.log.Warn("protocol version agreement failed", "reason", agreement.Reason)
		s.fail(websocket.StatusCode(agreement.Code), agreement.Reason, err)
	}
	if err != nil {
		return 0, fmt.Errorf("wsconn: version agreement: %w", err)
	}
	return v, nil
}

// begin starts shutdown once, recording cause; it reports whether this call started it.
func (s *socket) begin(cause error) bool {
	started := false
	s.shutdownOnce.Do(func() {
		started = true
		s.causeErr = cause
		close(s.closing)
	})
	return started
}

func (s *socket) isClosing() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

func (s *socket) cause() error {
	if !s.isClosing() {
		return nil
	}
	return s.causeErr
}

// closedErr is what Send and friends return once the socket is shutting down.
func (s *socket) closedErr() error {
	if cause := s.cause(); cause != nil && !errors.Is(cause, ErrClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, cause)
	}
	return ErrClosed
}

// close ends the socket gracefully: the writer writes every queued frame, then the WebSocket
// closes with code and reason. ctx bounds the drain and the close handshake; when it ends
// first the connection is dropped.
func (s *socket) close(ctx context.Context, code websocket.StatusCode, reason string) error {
	if !s.begin(ErrClosed) {
		select { // another shutdown is under way: wait for it
		case <-s.finished:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("wsconn: close: %w", ctx.Err())
		}
	}
	defer close(s.finished)
	if err := s.lanes.drainAndWait(ctx); err != nil {
		_ = s.ws.CloseNow()
		return fmt.Errorf("wsconn: close: draining queued frames: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.ws.Close(code, reason) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("wsconn: close: %w", err)
		}
		return nil
	case <-ctx.Done():
		_ = s.ws.CloseNow()
		return fmt.Errorf("wsconn: close handshake: %w", ctx.Err())
	}
}

// fail ends the socket after a protocol failure: queued frames are dropped and the WebSocket
// closes with code and reason (the library waits a bounded time for the peer's close).
func (s *socket) fail(code websocket.StatusCode, reason string, cause error) {
	if !s.begin(cause) {
		return
	}
	defer close(s.finished)
	s.lanes.stop()
	_ = s.ws.Close(code, reason)
}

// abort drops the connection without a close handshake.
func (s *socket) abort(cause error) {
	started := s.begin(cause)
	s.lanes.stop()
	_ = s.ws.CloseNow()
	if started {
		close(s.finished)
	}
}

// ioFailure ends the socket after a read or write error and returns it wrapped.
func (s *socket) ioFailure(op string, err error) error {
	err = fmt.Errorf("wsconn: %s: %w", op, err)
	if !s.isClosing() { // a closer in progress owns the teardown
		s.abort(err)
	}
	return err
}
