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

	idle   atomic.Bool // waiting for a request (Shutdown closes idle connections)
	authed atomic.Bool

	// Read side: the connection goroutine only.
	version uint8 // pinned by the first request; 0 until then
	inFrame bool  // re-arm the stall deadline on every socket read
	hdr     [wire.RequestHeaderLen]byte
	tag     [wire.SealTagLen]byte
	fields  [][]byte
	req     Request
	readMAC hash.Hash // MAC of the frame being read, when sealed
	data    any

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

func newConn(s *Server, raw net.Conn) *Conn {
	ctx, cancel := context.WithCancel(s.ctx)
	c := &Conn{srv: s, raw: raw, ctx: ctx, cancel: cancel, loopback: isLoopback(raw.RemoteAddr())}
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
// flushes pending replies (so pipelined replies batch into one write but
// nothing waits on a reply we hold), and inside a frame it re-arms the
// stall deadline so only a peer that stops sending is cut off.
type connReader struct{ c *Conn }

func (r connReader) Read(p []byte) (int, error) {
	c := r.c
	if err := c.flush(); err != nil {
		return 0, err
	}
	if c.inFrame {
		c.raw.SetReadDeadline(time.Now().Add(c.srv.cfg.FrameTimeout))
	}
	return c.raw.Read(p)
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
// idle timeout and checks the magic.
func (c *Conn) awaitRequest() closing {
	c.inFrame = false
	if c.br.Buffered() == 0 {
		if err := c.flush(); err != nil {
			return closing{reason: ClosedWriteFailed}
		}
		c.raw.SetReadDeadline(time.Now().Add(c.srv.cfg.IdleTimeout))
	}
	if !c.enterIdle() {
		return closing{reason: ClosedShutdown, linger: true}
	}
	first, err := c.br.Peek(1)
	if !c.exitIdle() {
		return closing{reason: ClosedShutdown, linger: true}
	}
	if err != nil {
		return closing{reason: c.readFailure(err, ClosedIdle)}
	}
	if first[0] != wire.Magic {
		c.srv.cfg.Observer.Refused(RefusedBadMagic)
		return closing{reason: ClosedProtocol}
	}
	c.inFrame = true
	return closing{}
}

// enterIdle publishes that the connection waits for a request. The idle
// deadline is already set, so a Shutdown that sees idle and moves the
// deadline to the past cannot be overwritten by it.
func (c *Conn) enterIdle() bool {
	c.idle.Store(true)
	return !c.srv.shuttingDown.Load()
}

// exitIdle ends the wait; false means Shutdown began meanwhile and the
// request must not start.
func (c *Conn) exitIdle() bool {
	c.idle.Store(false)
	return !c.srv.shuttingDown.Load()
}

// wakeIfIdle is Shutdown's half of the handshake.
func (c *Conn) wakeIfIdle() {
	if c.idle.Load() {
		c.raw.SetReadDeadline(aLongTimeAgo)
	}
}

// readFailure classifies a read error: a deadline means onTimeout.
func (c *Conn) readFailure(err error, onTimeout CloseReason) CloseReason {
	var ne net.Error
	switch {
	case c.srv.closing() && c.ctx.Err() != nil:
		return ClosedShutdown
	case errors.As(err, &ne) && ne.Timeout():
		return onTimeout
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
	c.srv.cfg.Observer.ConnClosed(end.reason)
	c.srv.forget(c)
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
