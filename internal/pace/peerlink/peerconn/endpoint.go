package peerconn

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
)

// DefaultHandshakeTimeout bounds a handshake at either end
// (pace-consensus §7.3.5): an acceptor closes a connection that proved
// nothing by then, a dialler gives up on an address that sent no
// challenge or no verdict.
const DefaultHandshakeTimeout = 5 * time.Second

// readBufferSize is each Conn's read buffer: heartbeats and votes are
// small; a large message is read straight through it.
const readBufferSize = 16 << 10

// aLongTimeAgo is a deadline in the past: it wakes a blocked read or write.
var aLongTimeAgo = time.Unix(1, 0)

// Config is one node's consensus links.
type Config struct {
	// Member is this node's side of every link: identity, roster, random
	// source (shared by concurrent handshakes), message cap, sender check.
	// Required.
	Member *peerlink.Member
	// Counters receives the refusal counts; nil counts nothing.
	Counters *peerlink.Counters
	// HandshakeTimeout bounds each handshake; 0 means
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// Logger receives refusals; nil logs nothing.
	Logger *slog.Logger
	// Now paces the once-a-minute log; nil means time.Now. The handshake
	// bound is a socket deadline, HandshakeTimeout from the runtime's
	// clock, since that is the clock a net.Conn's deadline is read
	// against (tests move both together with testing/synctest).
	Now func() time.Time
}

// Endpoint accepts and dials consensus links for one node. It is safe for
// concurrent use by any number of connections.
type Endpoint struct {
	member   *peerlink.Member
	counters *peerlink.Counters
	timeout  time.Duration
	log      *refusalLog
}

// NewEndpoint checks cfg and returns the node's endpoint.
func NewEndpoint(cfg Config) (*Endpoint, error) {
	if cfg.Member == nil {
		return nil, fmt.Errorf("%w: Config.Member is required", peerlink.ErrBadConfig)
	}
	e := &Endpoint{member: cfg.Member, counters: cfg.Counters, timeout: cfg.HandshakeTimeout}
	if e.timeout <= 0 {
		e.timeout = DefaultHandshakeTimeout
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	e.log = &refusalLog{log: cfg.Logger, now: now, self: cfg.Member.ID}
	return e, nil
}

// RefuseFull closes a connection the caller's listener has no room for,
// before any handshake, and counts it
// (pace_raft_peer_connections_refused_full_total).
func (e *Endpoint) RefuseFull(raw net.Conn) {
	raw.Close()
	e.counters.Count(peerlink.RoleAcceptor, peerlink.ErrListenerFull)
	e.log.unproven("consensus connection refused", "reason", peerlink.Reason(peerlink.ErrListenerFull), "from", addrOf(raw))
}

// bound sets the handshake's deadline on raw and makes ctx's end wake it.
// finish clears both; it reports ctx's error if ctx ended first. (Clearing
// the deadline of a connection the peer already closed fails on some
// conns; the next read says so, so that failure is not one here.)
func (e *Endpoint) bound(ctx context.Context, raw net.Conn) (finish func() error) {
	raw.SetDeadline(time.Now().Add(e.timeout))
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(aLongTimeAgo) })
	return func() error {
		if !stop() {
			return ctx.Err()
		}
		raw.SetDeadline(time.Time{})
		return nil
	}
}

// errGarbled marks bytes that arrived but are not the handshake frame the
// reader waited for.
var errGarbled = errors.New("not a handshake frame")

// readHandshake reads one handshake frame whole, judging its header before
// reading its payload.
func readHandshake(br *bufio.Reader) ([]byte, error) {
	var hdr [peerlink.HeaderLen]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, garbledIfPartial(err)
	}
	h, err := peerlink.ParseHeader(hdr[:], 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errGarbled, err)
	}
	if h.Kind == peerlink.KindMessage {
		return nil, fmt.Errorf("%w: a message before the handshake finished", errGarbled)
	}
	frame := make([]byte, peerlink.HeaderLen+int(h.Len))
	copy(frame, hdr[:])
	if _, err := io.ReadFull(br, frame[peerlink.HeaderLen:]); err != nil {
		return nil, garbledIfPartial(unexpected(err)) // a header is a start
	}
	return frame, nil
}

// garbledIfPartial: a frame cut short is garbled; a clean EOF before any
// byte of it, or a reset, is the peer closing.
func garbledIfPartial(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", errGarbled, err)
	}
	return err
}

// classify names a failed handshake read or write: ctx's end (counted
// nowhere), the timeout, garbled bytes, or the peer closing.
func classify(ctx context.Context, err, closed, garbled error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%w: %w", peerlink.ErrHandshakeTimeout, err)
	case errors.Is(err, errGarbled):
		return fmt.Errorf("%w: %w", garbled, err)
	}
	return fmt.Errorf("%w: %w", closed, err)
}

func addrOf(c net.Conn) string {
	if a := c.RemoteAddr(); a != nil {
		return a.String()
	}
	return "unknown address"
}
