package kv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// Config is everything pace-kv's flags set.
type Config struct {
	Listen        string // cache listener, host:port
	MetricsListen string // HTTP /metrics and /healthz; "" = off
	Storage       string // disk tier directory; "" = memory only
	MaxDisk       int64  // 0 = unbounded
	MaxMemory     int64  // memory tier budget; 0 = none (then Storage is required)
	MaxValue      uint32 // session cap: the largest STORE/FETCH payload; 0 = wire default
	// Password is --requirepass: "" runs without one; one that is only whitespace is refused.
	Password string
	Sync     store.SyncPolicy
	// Connection limits and deadlines (pace-wire §1.8); zero takes frameserver's default.
	MaxConns        int
	MaxConnsPerAddr int
	IdleTimeout     time.Duration
	FrameTimeout    time.Duration
	AuthTimeout     time.Duration
	// MaxInflight is the in-flight payload budget: bytes of frames over 64 KiB being received
	// or handled at once (0 = frameserver.DefaultPayloadBudget).
	MaxInflight int64
	Version     string
	Logger      *slog.Logger
	// Now is the clock of the AUTH guard; nil uses time.Now.
	Now func() time.Time
}

// MemoryOverhead is what pace-kv holds beyond its memory tier and its in-flight payload budget:
// the runtime, a full connection table's buffers and goroutines, and the store's index
// (measured in cmd/pace-kv's tests).
const MemoryOverhead = 128 << 20

// MemoryCeiling is the most memory the configuration lets pace-kv hold: the memory tier, the
// in-flight payload budget (plus the eighth a large read may briefly hold on top, see
// frameserver's buffers) and MemoryOverhead. pace-kv sets it as the Go runtime's memory limit,
// so garbage is collected before the process grows past it.
func (c Config) MemoryCeiling() int64 {
	inflight := c.MaxInflight
	if inflight == 0 {
		inflight = frameserver.DefaultPayloadBudget
	}
	return c.MaxMemory + inflight + inflight/8 + MemoryOverhead
}

// Server is a running pace-kv: its store, its 0xFC listener and its metrics endpoint.
type Server struct {
	cfg      Config
	log      *slog.Logger
	st       *store.Store
	pass     *password
	m        *metrics
	frames   *frameserver.Server
	ln       net.Listener
	httpLn   net.Listener
	http     *http.Server
	stopping atomic.Bool
}

// New opens the store and binds the listeners, so every configuration and bind error surfaces
// before the server reports itself ready.
func New(cfg Config) (*Server, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	st, err := store.Open(store.Options{Dir: cfg.Storage, MaxDisk: cfg.MaxDisk, MaxMemory: cfg.MaxMemory, Sync: cfg.Sync, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("pace-kv: opening storage: %w", err)
	}
	s := &Server{cfg: cfg, log: log, st: st, pass: &password{}}
	if cfg.Password != "" {
		if err := s.pass.set(cfg.Password); err != nil {
			st.Close()
			return nil, fmt.Errorf("pace-kv: --requirepass: %w", err)
		}
	}
	s.m = newMetrics(cfg.Version, st)
	if err := s.listen(); err != nil {
		st.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) listen() error {
	now := s.cfg.Now
	if now == nil {
		now = time.Now
	}
	h := &handler{st: s.st, pass: s.pass, m: s.m, log: s.log, guard: newAuthGuard(now),
		logs: &logLimiter{window: time.Minute, burst: 10}}
	frames, err := frameserver.New(frameserver.Config{
		Handler: h, SessionCap: s.cfg.MaxValue, CredentialRequired: s.pass.required,
		MaxConns: s.cfg.MaxConns, MaxConnsPerAddr: s.cfg.MaxConnsPerAddr, IdleTimeout: s.cfg.IdleTimeout,
		FrameTimeout: s.cfg.FrameTimeout, AuthTimeout: s.cfg.AuthTimeout, PayloadBudget: s.cfg.MaxInflight,
		Observer: s.m.observer(), Logger: s.log,
	})
	if err != nil {
		return fmt.Errorf("pace-kv: %w", err)
	}
	s.frames = frames
	s.m.reg.Add(frames.Gauges("pace_kv")...)
	if s.ln, err = net.Listen("tcp", s.cfg.Listen); err != nil {
		return fmt.Errorf("pace-kv: listening on %s: %w", s.cfg.Listen, err)
	}
	if s.cfg.MetricsListen == "" {
		return nil
	}
	if s.httpLn, err = net.Listen("tcp", s.cfg.MetricsListen); err != nil {
		s.ln.Close()
		return fmt.Errorf("pace-kv: metrics listener on %s: %w", s.cfg.MetricsListen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.m.reg.Handler())
	mux.HandleFunc("/healthz", s.healthz)
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return nil
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	if s.stopping.Load() {
		http.Error(w, "stopping", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

// Addr is the cache listener's address; MetricsAddr the metrics listener's, or nil.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// MetricsAddr is the metrics listener's address, or nil when it is off.
func (s *Server) MetricsAddr() net.Addr {
	if s.httpLn == nil {
		return nil
	}
	return s.httpLn.Addr()
}

// Serve runs until Shutdown; it returns nil after a clean stop.
func (s *Server) Serve() error {
	if s.http != nil {
		go func() {
			if err := s.http.Serve(s.httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("metrics listener failed", "err", err)
			}
		}()
	}
	err := s.frames.Serve(s.ln)
	if errors.Is(err, frameserver.ErrServerClosed) {
		return nil
	}
	return err
}

// SetPassword replaces the password (SIGHUP). Connections already verified stay verified;
// setting one where there was none gates connections already open. A blank secret is refused
// (ErrBlankPassword) and the old one stays.
func (s *Server) SetPassword(secret string) error { return s.pass.set(secret) }

// DisablePassword turns authentication off: the explicit choice (--no-auth) a blank password
// never makes.
func (s *Server) DisablePassword() { s.pass.clear() }

// PasswordRequired reports whether a password is in force.
func (s *Server) PasswordRequired() bool { return s.pass.required() }

// Shutdown stops accepting, lets in-flight requests finish and reply, then closes the store so
// nothing is left half-written.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopping.Store(true)
	err := s.frames.Shutdown(ctx)
	if s.http != nil {
		s.http.Shutdown(ctx)
	}
	if cerr := s.st.Close(); err == nil {
		err = cerr
	}
	return err
}
