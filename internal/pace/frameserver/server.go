package frameserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Defaults for zero Config fields.
const (
	DefaultMaxConns        = 1024
	DefaultMaxConnsPerAddr = 128
	DefaultIdleTimeout     = 30 * time.Second
	DefaultFrameTimeout    = 10 * time.Second
	DefaultAuthTimeout     = 10 * time.Second
	DefaultWriteTimeout    = 30 * time.Second
	DefaultPayloadBudget   = 512 << 20
	DefaultBudgetWait      = 2 * time.Second
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
	// MaxConns caps open connections. At the cap a newcomer takes the slot
	// of a connection idle (or stuck in a header) for a second or more from
	// the address holding the most, when that address holds more than the
	// newcomer's; otherwise it is closed at once. 0 means DefaultMaxConns;
	// negative means no cap.
	MaxConns int
	// MaxConnsPerAddr caps the connections of one source address (an IPv4
	// address or an IPv6 /64; loopback counts like any other). 0 means
	// DefaultMaxConnsPerAddr; negative means no cap.
	MaxConnsPerAddr int
	// IdleTimeout closes a connection with no request for this long.
	IdleTimeout time.Duration
	// FrameTimeout is how long a header may take from its first byte, and
	// the fixed allowance of a payload, which must also arrive at
	// MinFrameRate: a frame of n bytes has FrameTimeout + n/MinFrameRate
	// after its header.
	FrameTimeout time.Duration
	// MinFrameRate is the payload floor rate in bytes a second; 0 means
	// DefaultMinFrameRate.
	MinFrameRate int
	// AuthTimeout closes a connection that has no accepted AUTH this long
	// after it was accepted, while CredentialRequired. 0 means
	// DefaultAuthTimeout; negative means none.
	AuthTimeout time.Duration
	// PayloadBudget bounds the payload bytes of frames above 64 KiB held
	// at once, from header to written reply; a frame that finds no room
	// within BudgetWait is refused endpoint-busy before its payload is
	// read. 0 means DefaultPayloadBudget; negative means none.
	PayloadBudget int64
	// BudgetWait is how long a frame waits for room in the budget; 0
	// means DefaultBudgetWait; negative means no wait.
	BudgetWait time.Duration
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

	budget        *payloadBudget // nil: no budget
	displaceAfter time.Duration  // see defaultDisplaceAfter; tests shorten it

	mu         sync.Mutex
	listeners  map[net.Listener]struct{}
	conns      map[*Conn]struct{}
	perAddr    map[netip.Addr]int // open connections by sourceKey
	displacing int                // displaced connections not yet gone
	wg         sync.WaitGroup     // connection goroutines
}

// New validates cfg, fills defaults, and returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Handler == nil {
		return nil, errors.New("frameserver: Config.Handler is required")
	}
	cfg = withDefaults(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg: cfg, ctx: ctx, cancel: cancel,
		listeners: map[net.Listener]struct{}{},
		conns:     map[*Conn]struct{}{},
		perAddr:   map[netip.Addr]int{},

		displaceAfter: defaultDisplaceAfter,
	}
	if cfg.PayloadBudget > 0 {
		s.budget = newPayloadBudget(cfg.PayloadBudget, cfg.BudgetWait, freeOSMemory)
	}
	return s, nil
}

func withDefaults(cfg Config) Config {
	if cfg.SessionCap == 0 {
		cfg.SessionCap = wire.DefaultSessionCap
	}
	if cfg.CredentialRequired == nil {
		cfg.CredentialRequired = func() bool { return false }
	}
	cfg.MaxConns = orDefault(cfg.MaxConns, DefaultMaxConns)
	cfg.MaxConnsPerAddr = orDefault(cfg.MaxConnsPerAddr, DefaultMaxConnsPerAddr)
	cfg.AuthTimeout = orDefault(cfg.AuthTimeout, DefaultAuthTimeout)
	cfg.PayloadBudget = orDefault(cfg.PayloadBudget, DefaultPayloadBudget)
	cfg.BudgetWait = orDefault(cfg.BudgetWait, DefaultBudgetWait)
	if cfg.MinFrameRate <= 0 {
		cfg.MinFrameRate = DefaultMinFrameRate
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

// InflightPayload is the payload bytes charged to the budget now (0 without one).
func (s *Server) InflightPayload() int64 {
	if s.budget == nil {
		return 0
	}
	return s.budget.inUse()
}

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
