package frameserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Defaults for zero Config fields.
const (
	DefaultMaxConns     = 1024
	DefaultIdleTimeout  = 30 * time.Second
	DefaultFrameTimeout = 10 * time.Second
	DefaultWriteTimeout = 30 * time.Second
)

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("frameserver: server closed")

// Config describes one surface's server.
type Config struct {
	// Handler runs admitted requests. Required.
	Handler Handler
	// SessionCap is the surface's session cap (--storage-max-value); 0
	// means wire.DefaultSessionCap.
	SessionCap uint32
	// CredentialRequired reports whether non-pre-auth verbs need an AUTH on
	// the connection. It is asked on every request, so a reload can flip
	// it (gating open connections too). Nil means never.
	CredentialRequired func() bool
	// MaxConns caps open connections; beyond it a new one is closed at
	// once. 0 means DefaultMaxConns; negative means no cap.
	MaxConns int
	// IdleTimeout closes a connection with no request for this long.
	IdleTimeout time.Duration
	// FrameTimeout closes a connection whose frame (header, payload or
	// tag) makes no progress for this long.
	FrameTimeout time.Duration
	// WriteTimeout bounds each reply write to a peer that stopped reading.
	WriteTimeout time.Duration
	// Observer receives accept, close and refusal events; nil ignores them.
	Observer Observer
	// Logger receives handler panics and accept errors; nil uses slog.Default.
	Logger *slog.Logger
}

// Server serves 0xFC connections from one or more listeners.
type Server struct {
	cfg    Config
	ctx    context.Context // cancelled by Close: handlers stop
	cancel context.CancelFunc

	// shuttingDown is atomic so a connection can check it on every
	// request without taking mu (see Conn.enterIdle for the handshake).
	shuttingDown atomic.Bool

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*Conn]struct{}
	wg        sync.WaitGroup // connection goroutines
}

// New validates cfg, fills defaults, and returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Handler == nil {
		return nil, errors.New("frameserver: Config.Handler is required")
	}
	cfg = withDefaults(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		cfg: cfg, ctx: ctx, cancel: cancel,
		listeners: map[net.Listener]struct{}{},
		conns:     map[*Conn]struct{}{},
	}, nil
}

func withDefaults(cfg Config) Config {
	if cfg.SessionCap == 0 {
		cfg.SessionCap = wire.DefaultSessionCap
	}
	if cfg.CredentialRequired == nil {
		cfg.CredentialRequired = func() bool { return false }
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.FrameTimeout <= 0 {
		cfg.FrameTimeout = DefaultFrameTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.Observer == nil {
		cfg.Observer = NopObserver{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}

// Serve accepts connections on l until Shutdown or Close, and returns
// ErrServerClosed then. Each connection is served on its own goroutine, so
// a slow request never blocks the accept loop or other connections.
func (s *Server) Serve(l net.Listener) error {
	if !s.track(l) {
		l.Close()
		return ErrServerClosed
	}
	defer s.untrack(l)
	var backoff time.Duration
	for {
		raw, err := l.Accept()
		if err != nil {
			if s.closing() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isRetriableAccept(err) {
				backoff = s.sleepBackoff(backoff, err)
				continue
			}
			return fmt.Errorf("frameserver: accept: %w", err)
		}
		backoff = 0
		s.admit(raw)
	}
}

func (s *Server) sleepBackoff(backoff time.Duration, err error) time.Duration {
	backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
	s.cfg.Logger.Warn("frameserver: accept failed; retrying", "err", err, "backoff", backoff)
	time.Sleep(backoff)
	return backoff
}

// admit starts serving raw, or closes it when the server is at its cap or
// shutting down.
func (s *Server) admit(raw net.Conn) {
	s.mu.Lock()
	full := s.cfg.MaxConns > 0 && len(s.conns) >= s.cfg.MaxConns
	if full || s.shuttingDown.Load() {
		s.mu.Unlock()
		if full {
			// Counted before the close, so a client that sees the close also sees the count.
			s.cfg.Observer.ConnRejected()
		}
		raw.Close()
		return
	}
	c := newConn(s, raw)
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	s.cfg.Observer.ConnAccepted()
	go c.serve()
}

// forget removes a finished connection.
func (s *Server) forget(c *Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}

func (s *Server) track(l net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shuttingDown.Load() {
		return false
	}
	s.listeners[l] = struct{}{}
	return true
}

func (s *Server) untrack(l net.Listener) {
	s.mu.Lock()
	delete(s.listeners, l)
	s.mu.Unlock()
}

func (s *Server) closing() bool { return s.shuttingDown.Load() }

// ActiveConns is the number of open connections.
func (s *Server) ActiveConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Shutdown stops accepting, closes idle connections at once, lets every
// request already being served finish and reply, then closes its
// connection. If ctx ends first, the remaining connections are closed
// (handlers see their context cancelled) and ctx's error is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.beginShutdown()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.Close()
		<-done
		return ctx.Err()
	}
}

// Close stops accepting and closes every connection now, cancelling the
// context of any handler still running.
func (s *Server) Close() error {
	s.beginShutdown()
	s.mu.Lock()
	for c := range s.conns {
		c.raw.Close()
	}
	s.mu.Unlock()
	s.cancel() // after the close: a handler that answers its cancelled context has no one to tell
	return nil
}

func (s *Server) beginShutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shuttingDown.Store(true)
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.wakeIfIdle()
	}
}
