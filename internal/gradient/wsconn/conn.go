package wsconn

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Options configure a Conn. The zero value is the production configuration.
type Options struct {
	// Logger receives agreement and size failures at warn level. Nil discards.
	Logger *slog.Logger
	// Versions is the range this side announces. Zero means wire.ProtoVersions(); tests and
	// future rollouts set it.
	Versions wire.VersionRange
	// SessionReadLimit caps every frame after EnterSession, in both directions: a bigger frame
	// read closes with 1009 and a bigger message is refused by Send. Zero means
	// wire.MaxProtoMessageSize; cache sessions pass wire.SafeInflightMessageSize.
	SessionReadLimit int
	// StallTimeout is how long Send waits for room in a full lane before failing with
	// ErrStalled. Zero means DefaultStallTimeout.
	StallTimeout time.Duration

	hooks *testHooks // test seams; nil in production
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Versions == (wire.VersionRange{}) {
		o.Versions = wire.ProtoVersions()
	}
	if o.SessionReadLimit <= 0 {
		o.SessionReadLimit = wire.MaxProtoMessageSize
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	return o
}

// Conn is one socket typed for its role: it sends S and receives R. Its Writer half is safe
// for concurrent use; its Reader half belongs to one read loop. Conn's own methods act on the
// whole socket.
type Conn[S, R wire.Message] struct {
	*Writer[S]
	*Reader[R]
	s          *socket
	peerHeader http.Header
}

// WorkerConn is the worker's side of a session: it sends ClientMessage and reads
// ServerMessage, whichever side dialed.
type WorkerConn = Conn[wire.ClientMessage, wire.ServerMessage]

// ServerConn is the server's side of a session (worker or cache session): it sends
// ServerMessage and reads ClientMessage.
type ServerConn = Conn[wire.ServerMessage, wire.ClientMessage]

// NewWorkerConn wraps an established WebSocket as the worker side. Prefer DialServer and
// AcceptServer: on a socket they did not set up, batches are not coalesced into one write
// and compression is whatever the caller negotiated.
func NewWorkerConn(ws *websocket.Conn, opts Options) *WorkerConn {
	return newWorkerConn(ws, nil, opts)
}

// NewServerConn wraps an established WebSocket as the server side; see NewWorkerConn.
func NewServerConn(ws *websocket.Conn, opts Options) *ServerConn {
	return newServerConn(ws, nil, opts)
}

func newWorkerConn(ws *websocket.Conn, bc *batchConn, opts Options) *WorkerConn {
	return newConn(newSocket(ws, bc, opts), wire.DecodeServerMessage,
		func(code uint16, reason string) wire.ClientMessage {
			return &wire.ClientReject{Code: code, Reason: reason}
		})
}

func newServerConn(ws *websocket.Conn, bc *batchConn, opts Options) *ServerConn {
	return newConn(newSocket(ws, bc, opts), wire.DecodeClientMessage,
		func(code uint16, reason string) wire.ServerMessage {
			return &wire.ServerReject{Code: code, Reason: reason}
		})
}

func newConn[S, R wire.Message](s *socket, decode func([]byte, uint16) (R, error),
	reject func(uint16, string) S) *Conn[S, R] {
	return &Conn[S, R]{
		Writer: &Writer[S]{s: s, newReject: reject},
		Reader: &Reader[R]{s: s, decode: decode},
		s:      s,
	}
}

// PeerHeader is the HTTP header the peer sent with the upgrade: its request when this side
// accepted, its 101 response when this side dialed. Nil for a socket wrapped by
// NewWorkerConn or NewServerConn.
func (c *Conn[S, R]) PeerHeader() http.Header { return c.peerHeader }

// Version is the agreed protocol version, or 0 before agreement has succeeded.
func (c *Conn[S, R]) Version() uint16 { return c.s.agreedVersion() }

// Agree runs version agreement now if no Send or Read has yet, and returns the agreed
// version. A failure is a *wire.AgreementError (errors.As) after the socket closed with 1002.
func (c *Conn[S, R]) Agree(ctx context.Context) (uint16, error) { return c.s.agree(ctx) }

// Done is closed when the socket starts shutting down, for any reason.
func (c *Conn[S, R]) Done() <-chan struct{} { return c.s.closing }

// Err is nil while the socket is open, ErrClosed after a local Close, and otherwise the
// failure that ended it (a read or write error, a size or agreement failure).
func (c *Conn[S, R]) Err() error { return c.s.cause() }

// HandshakeContext bounds a session driver's handshake (agreement through InitAck) by
// HandshakeTimeout. When it expires mid-read the socket is closed: the handshake gave up.
func HandshakeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, HandshakeTimeout)
}
