package httpfront

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/counter"
)

// Counters count the listener's decisions.
type Counters struct {
	Accepted       atomic.Uint64
	RefusedPerAddr atomic.Uint64
	RefusedTotal   atomic.Uint64
	Evicted        atomic.Uint64 // idle or head-less connections closed to make room
}

// Metrics lists the counters under their exposition names.
func (c *Counters) Metrics() []counter.Metric {
	return []counter.Metric{
		{Name: "gradient_http_connections_accepted_total", Help: "Connections the public listener admitted.", Value: &c.Accepted},
		{Name: "gradient_http_connections_refused_total", Help: "Connections answered 503 and closed: a connection cap was reached with nothing idle to close.",
			Label: "cap", Series: map[string]*atomic.Uint64{"per_address": &c.RefusedPerAddr, "total": &c.RefusedTotal}},
		{Name: "gradient_http_connections_evicted_total", Help: "Idle keep-alive connections (or ones without a request head after 2 s) closed to make room at a cap.", Value: &c.Evicted},
	}
}

// Front is the public listener and the http.Server on it.
type Front struct {
	limits   Limits // with the defaults filled in
	ln       *listener
	srv      *http.Server
	counters Counters
}

// Config is what a Front serves and how.
type Config struct {
	Handler http.Handler
	Limits  Limits
	// Log receives refusals and net/http's own errors; give it a bounded rate (ratelog).
	Log *slog.Logger
	Now func() time.Time // nil: time.Now
}

// New wraps ln with the caps of cfg.Limits and builds the http.Server for it.
func New(ln net.Listener, cfg Config) *Front {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	l := cfg.Limits
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns()
	}
	if l.MaxConnsPerAddr <= 0 {
		l.MaxConnsPerAddr = DefaultMaxConnsPerAddr
	}
	f := &Front{limits: l}
	f.ln = &listener{Listener: ln, log: cfg.Log, counters: &f.counters, now: cfg.Now, table: newTable(l.MaxConns, l.MaxConnsPerAddr)}
	f.srv = &http.Server{
		Handler:           bodyDeadline(cfg.Handler, l.BodyTimeout, cfg.Now),
		ReadHeaderTimeout: l.HeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnState:         f.ln.connState,
		ErrorLog:          slog.NewLogLogger(cfg.Log.Handler(), slog.LevelWarn),
	}
	return f
}

// Serve serves until Shutdown; it returns nil after Shutdown.
func (f *Front) Serve() error {
	if err := f.srv.Serve(f.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting, closes idle connections and waits for requests in flight.
func (f *Front) Shutdown(ctx context.Context) error { return f.srv.Shutdown(ctx) }

// Limits are the limits in force, defaults filled in.
func (f *Front) Limits() Limits { return f.limits }

// Counters are the listener's counters.
func (f *Front) Counters() *Counters { return &f.counters }

// bodyDeadline bounds the reading of a request body by d from the end of its head. The
// deadline is lifted when the body has been read to its end, so a long answer (a NAR
// download) is not cut: net/http's ReadTimeout would cancel the request's context once it
// passed, whatever the handler was doing.
func bodyDeadline(h http.Handler, d time.Duration, now func() time.Time) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(now().Add(d)); err == nil {
			r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		}
		h.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline when the body ends.
type deadlineBody struct {
	io.ReadCloser
	lift   func()
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		b.lift()
	}
	return n, err
}
