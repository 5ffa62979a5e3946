package frameserver

import (
	"bufio"
	"context"
	"errors"
	"hash"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Buffer sizes and close behaviour.
const (
	readBufferSize = 16 << 10
	lingerTimeout  = 500 * time.Millisecond
	lingerMax      = 1 << 20
)

// aLongTimeAgo is a deadline in the past: it wakes a blocked read now.
var aLongTimeAgo = time.Unix(1, 0)

var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

// ErrNoInterim is returned by Progress and Push outside a request whose op
// allows that status (Progress on COMPILE, Push on SUBSCRIBE).
var ErrNoInterim = errors.New("frameserver: interim reply not allowed now")

// Conn is one client connection as a Handler sees it.
type Conn struct {
	srv      *Server
	raw      net.Conn
	br       *bufio.Reader
	ctx      context.Context
	cancel   context.CancelFunc
	loopback bool
	src      netip.Addr // the per-address cap's key
	authBy   time.Time  // the pre-auth deadline; zero when none applies

	// phase says what the connection waits for (Shutdown closes idle
	// connections, a newcomer at the cap may displace an idle or mid-header
	// one); phaseSince is when it entered it, in Unix nanoseconds.
	phase      atomic.Uint32
	phaseSince atomic.Int64
	displaced  atomic.Bool
	authed     atomic.Bool

	// Read side: the connection goroutine only.
	version  uint8       // pinned by the first request; 0 until then
	reading  CloseReason // what missing the armed read deadline means
	frameEnd time.Time   // inside a frame: when all of it must be in; zero between frames
	hdr      [wire.RequestHeaderLen]byte
	tag      [wire.SealTagLen]byte
	fields   [][]byte
	req      Request
	readMAC  hash.Hash // MAC of the frame being read, when sealed
	data     any

	// Write side, guarded by wmu (interim frames may come from a handler's
	// own goroutines).
	wmu       sync.Mutex
	wbuf      *[]byte
	bufArr    [2][]byte
	bufs      net.Buffers
	refusal   []byte
	writeErr  error
	sealer    Sealer
	interimOK wire.StatusSet // interim statuses the current request allows
}

// Connection phases.
const (
	phaseBusy   uint32 = iota // reading a payload, or handling a request
	phaseIdle                 // waiting for the first byte of a request
	phaseHeader               // inside a request header
)

func newConn(s *Server, raw net.Conn, src netip.Addr) *Conn {
	ctx, cancel := context.WithCancel(s.ctx)
	c := &Conn{srv: s, raw: raw, ctx: ctx, cancel: cancel, loopback: isLoopback(raw.RemoteAddr()), src: src}
	if s.cfg.AuthTimeout > 0 {
		c.authBy = time.Now().Add(s.cfg.AuthTimeout)
	}
	c.br = readers.Get().(*bufio.Reader)
	c.br.Reset(connReader{c})
	return c
}

func isLoopback(a net.Addr) bool {
	if tcp, ok := a.(*net.TCPAddr); ok {
		ip, ok := netip.AddrFromSlice(tcp.IP)
		return ok && ip.Unmap().IsLoopback()
	}
	return false
}

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.raw.RemoteAddr() }

// Source is the address the per-address cap counts the peer under: its
// IPv4 address or the /64 of its IPv6 one; the zero Addr when not IP.
func (c *Conn) Source() netip.Addr { return c.src }

// LocalAddr is the address the peer dialled.
func (c *Conn) LocalAddr() net.Addr { return c.raw.LocalAddr() }

// IsLoopback reports whether the peer is on this machine's loopback.
func (c *Conn) IsLoopback() bool { return c.loopback }

// Authenticated reports whether an AUTH was accepted on this connection.
func (c *Conn) Authenticated() bool { return c.authed.Load() }

// SetAuthenticated records the outcome of an AUTH handler. A connection
// that verified stays verified across a secret rotation.
func (c *Conn) SetAuthenticated(ok bool) { c.authed.Store(ok) }

// Version is the wire version pinned by the first request.
func (c *Conn) Version() uint8 { return c.version }

// Data returns the handler's per-connection state (nil until set).
func (c *Conn) Data() any { return c.data }

// SetData stores per-connection state for the handler (a proven identity,
// an outstanding challenge). Call it from Serve only.
func (c *Conn) SetData(v any) { c.data = v }

// InstallSealer seals every later frame in both directions, starting with
// the reply to the current request (pace-wire §1.15.4).
func (c *Conn) InstallSealer(s Sealer) {
	c.wmu.Lock()
	c.sealer = s
	c.wmu.Unlock()
}

// Sealed reports whether a Sealer is installed.
func (c *Conn) Sealed() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.sealer != nil
}

// Progress writes a Progress frame now (a liveness pulse during COMPILE).
// It is safe to call from any goroutine while Serve runs.
func (c *Conn) Progress() error { return c.interim(wire.StatusProgress, nil) }

// Push writes a Push frame now (a SUBSCRIBE stream frame).
func (c *Conn) Push(payload []byte) error { return c.interim(wire.StatusPush, payload) }

// connReader is the bufio.Reader's source: before blocking on the socket it
// flushes pending replies, so pipelined replies batch into one write but
// nothing waits on a reply we hold. Inside a frame every read must make
// progress within FrameTimeout and the frame must be whole by its frameEnd:
// a peer that stops is cut after FrameTimeout, one that trickles a byte at
// a time at frameEnd.
type connReader struct{ c *Conn }

func (r connReader) Read(p []byte) (int, error) {
	c := r.c
	if err := c.flush(); err != nil {
		return 0, err
	}
	if !c.frameEnd.IsZero() {
		c.armRead(readDeadline{at: minTime(c.frameEnd, time.Now().Add(c.srv.cfg.FrameTimeout)), reason: ClosedStalled})
	}
	return c.raw.Read(p)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// armRead sets the read deadline, capped by the pre-auth deadline while
// the surface wants a credential this connection has not shown.
func (c *Conn) armRead(d readDeadline) {
	if !c.authBy.IsZero() && !c.authed.Load() && c.srv.cfg.CredentialRequired() {
		d = earliest(d, c.authBy)
	}
	c.reading = d.reason
	c.raw.SetReadDeadline(d.at)
}

// startFrame sets when the next part of a frame (its header, or the rest
// once the header is in) must be whole; connReader arms it on each read.
func (c *Conn) startFrame(allowance time.Duration) {
	c.frameEnd = time.Now().Add(allowance)
}

func (c *Conn) setPhase(p uint32) {
	c.phaseSince.Store(time.Now().UnixNano())
	c.phase.Store(p)
}

// displaceable reports whether a newcomer may take this connection's slot,
// and since when it has been waiting.
func (c *Conn) displaceable() (int64, bool) {
	p := c.phase.Load()
	return c.phaseSince.Load(), (p == phaseIdle || p == phaseHeader) && !c.displaced.Load()
}

// displace ends the connection for a newcomer. Its goroutine checks the
// flag after every phase change, so a connection that began a request
// before the flag was set finishes that request first.
func (c *Conn) displace() {
	c.displaced.Store(true)
	if p := c.phase.Load(); p == phaseIdle || p == phaseHeader {
		c.raw.SetReadDeadline(aLongTimeAgo)
	}
}

// closing says how a connection ends.
type closing struct {
	reason CloseReason
	linger bool // a reply may be unread: half-close and drain before closing
}

// serve runs the connection until it ends.
func (c *Conn) serve() {
	var end closing
	for {
		if end = c.awaitRequest(); end.reason != 0 {
			break
		}
		if end = c.handleFrame(); end.reason != 0 {
			break
		}
	}
	c.finish(end)
}

// awaitRequest waits for the first byte of the next request within the
// idle timeout, checks the magic, and arms the header's deadline.
func (c *Conn) awaitRequest() closing {
	c.frameEnd = time.Time{}
	if c.br.Buffered() == 0 {
		if err := c.flush(); err != nil {
			return closing{reason: ClosedWriteFailed}
		}
		c.armRead(readDeadline{at: time.Now().Add(c.srv.cfg.IdleTimeout), reason: ClosedIdle})
	}
	if end := c.enterIdle(); end.reason != 0 {
		return end
	}
	first, err := c.br.Peek(1)
	if end := c.exitIdle(); end.reason != 0 {
		return end
	}
	if err != nil {
		return closing{reason: c.readFailure(err)}
	}
	if first[0] != wire.Magic {
		c.srv.cfg.Observer.Refused(RefusedBadMagic)
		return closing{reason: ClosedProtocol}
	}
	c.startFrame(c.srv.cfg.FrameTimeout)
	return closing{}
}

// enterIdle publishes that the connection waits for a request. The idle
// deadline is already set, so a Shutdown (or a displacement) that sees idle
// and moves the deadline to the past cannot be overwritten by it.
func (c *Conn) enterIdle() closing {
	c.setPhase(phaseIdle)
	return c.interrupted()
}

// exitIdle ends the wait and enters the header; a Shutdown or displacement
// that began meanwhile stops the request before it starts.
func (c *Conn) exitIdle() closing {
	c.setPhase(phaseHeader)
	return c.interrupted()
}

func (c *Conn) interrupted() closing {
	switch {
	case c.srv.shuttingDown.Load():
		return closing{reason: ClosedShutdown, linger: true}
	case c.displaced.Load():
		return closing{reason: ClosedDisplaced}
	}
	return closing{}
}

// wakeIfIdle is Shutdown's half of the handshake: a connection waiting for a
// request, or inside a header (no request has started), is woken to close.
func (c *Conn) wakeIfIdle() {
	if p := c.phase.Load(); p == phaseIdle || p == phaseHeader {
		c.raw.SetReadDeadline(aLongTimeAgo)
	}
}

// readFailure classifies a read error: a deadline means whatever the armed
// deadline stood for.
func (c *Conn) readFailure(err error) CloseReason {
	var ne net.Error
	switch {
	case c.srv.closing() && (c.ctx.Err() != nil || c.phase.Load() != phaseBusy):
		return ClosedShutdown
	case c.displaced.Load():
		return ClosedDisplaced
	case errors.As(err, &ne) && ne.Timeout():
		return c.reading
	}
	return ClosedByPeer
}

// finish flushes what is pending, closes the socket (lingering when a
// reply may still be unread), and returns buffers to their pools.
func (c *Conn) finish(end closing) {
	c.wmu.Lock()
	c.flushLocked()
	c.releaseWriteBuffer()
	c.wmu.Unlock()
	if end.linger {
		c.lingerClose()
	} else {
		c.raw.Close()
	}
	c.cancel()
	c.br.Reset(nil)
	readers.Put(c.br)
	c.srv.forget(c) // before the count, so whoever sees it closed finds its slot free
	c.srv.cfg.Observer.ConnClosed(end.reason)
	c.srv.wg.Done()
}

// lingerClose half-closes so the reply is delivered and then discards
// what the peer still sends, for a bounded time and amount: closing with
// unread input would reset the connection and could destroy the reply.
func (c *Conn) lingerClose() {
	if hc, ok := c.raw.(interface{ CloseWrite() error }); ok && hc.CloseWrite() == nil {
		c.raw.SetReadDeadline(time.Now().Add(lingerTimeout))
		io.CopyN(io.Discard, c.raw, lingerMax)
	}
	c.raw.Close()
}
