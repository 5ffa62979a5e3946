package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/cacheserve"
	"github.com/buildfleet/buildfleet/internal/gradient/health"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// worker is one running /proto session.
type worker struct {
	srv         *Server
	conn        *wsconn.ServerConn
	id          string
	log         *slog.Logger
	connectedAt time.Time
	lastSeen    atomic.Int64 // unix nanoseconds of the last inbound frame
	reports     chan report
	cache       *cacheserve.Session
	ctx         context.Context
	cancelCause context.CancelCauseFunc // ends the session, saying why
	endedBy     atomic.Pointer[error]   // why the server is ending the session (set before its close)
	remote      string                  // the worker's ip:port, or the URL the server dialed
	auth        *sessionAuth            // the handshake role, kept for reauth rounds (reauth.go)

	fillMu sync.Mutex // one filler of idle slots at a time (read loop, kicks, pool pass)

	mu         sync.Mutex
	grants     grants
	negotiated wire.GradientCapabilities
	// unavailable is what the worker said its Nix cannot do, and why (health header).
	unavailable health.Unavailable
	caps        *wire.WorkerCapabilities
	handed      map[string]store.JobRef // assignment ID -> job, handed out by this session
	byJob       map[string]string       // job ID -> its open assignment ID
	subst       map[string]bool         // assignment ID -> BuildOutput said substituted
	idle        [2]int                  // unanswered RequestJobs, by wire.JobKind
	draining    bool
}

func newWorker(s *Server, conn *wsconn.ServerConn, res session.Result, id store.WorkerIdentity, remote string) *worker {
	ctx, cancel := context.WithCancelCause(s.ctx)
	w := &worker{srv: s, conn: conn, id: res.WorkerID, connectedAt: s.now(), reports: make(chan report, reportQueue),
		ctx: ctx, cancelCause: cancel, handed: map[string]store.JobRef{}, byJob: map[string]string{}, subst: map[string]bool{},
		log: s.log.With("worker", res.WorkerID), remote: remote}
	w.grants, w.negotiated = grantsOf(res, id.Facts), res.Capabilities
	w.unavailable = health.Parse(conn.PeerHeader())
	s.quarantine.lift(w.id)
	w.lastSeen.Store(w.connectedAt.UnixNano())
	w.cache = cacheserve.New(cacheserve.Config{Paths: s.cfg.Store, NARs: s.cfg.NARs, Admission: s.uploads,
		Send: w.send, Scope: w.cacheScope, Logger: w.log, Now: s.now, WorkerID: w.id, Counters: &s.cacheCounters,
		Upstream: s.upstreams})
	w.log.Info("worker connected", "remote", remote, "authorized", res.Authorized, "failed", len(res.Failed),
		"capabilities", capsString(res.Capabilities))
	if len(w.unavailable) > 0 {
		w.log.Warn("the worker withholds what its Nix cannot do", "unavailable", w.unavailable.String())
	}
	return w
}

// run serves the session until it ends, then applies the lost worker's consequences.
func (w *worker) run() {
	s := w.srv
	if err := s.cfg.Store.MarkWorkerConnected(w.ctx, w.id, w.connectedAt); err != nil {
		w.log.Warn("recording the connection", "err", err)
	}
	s.counters.SessionsStarted.Add(1)
	applied := make(chan struct{})
	go func() { defer close(applied); w.applyReports() }()
	err := w.loadCaches(w.ctx)
	if err == nil {
		err = w.readLoop()
	} else {
		w.log.Error("reading the caches this worker may use; ending the session", "err", err)
	}
	w.closeSocket(err)
	close(w.reports)
	<-applied
	w.cancelCause(nil)
	w.cache.Close()
	w.end(err)
}

// closeSocket closes the session's socket on every way out of the read loop, before its
// goroutines are waited for, so no session outlives its socket or holds it half-closed. A
// violation the role did not judge is answered Error 400 malformed message first; a socket
// already closing is only waited for.
func (w *worker) closeSocket(err error) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if errors.Is(err, errProtocol) {
		w.srv.counters.ProtocolViolations.Add(1)
		w.srv.hostile.Warn("protocol violation: answered Error 400 and closed the session",
			"worker", w.id, "remote", w.remote, "err", err)
		_ = w.conn.Send(ctx, &wire.ServerError{Code: session.CodeUnexpected, Message: session.MessageMalformed})
	}
	if err := w.conn.Close(ctx); err != nil {
		w.conn.Abort()
	}
}

// closeTimeout bounds the close of a session's socket (queued frames, then the close
// handshake); past it the connection is dropped.
const closeTimeout = 2 * time.Second

// endingBecause records why the server is about to close the session. It is set before the
// close, since whatever the read loop or the cache load sees of the close follows from it.
func (w *worker) endingBecause(err error) { w.endedBy.Store(&err) }

// end records why the session ended and, unless the server is stopping (recovery handles
// that at the next start), abandons the worker's open assignments before its slot is freed.
func (w *worker) end(err error) {
	s := w.srv
	if ended := w.endedBy.Load(); ended != nil {
		err = *ended // the server ended it: whatever the read loop or cache load saw follows from that
	}
	reason := endReason(err)
	w.log.Info("worker disconnected", "reason", reason)
	if !s.stopping.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		eff, aerr := s.cfg.Store.AbandonWorker(ctx, w.id, reason)
		if aerr != nil {
			w.log.Error("abandoning the lost worker's assignments", "err", aerr)
		} else {
			s.Apply(ctx, eff)
		}
		cancel()
		s.recordOffline(w.id, reason)
	}
	s.sessions.release(w.id, w)
}

func endReason(err error) string {
	switch {
	case err == nil, errors.Is(err, wsconn.ErrClosed):
		return "connection closed"
	case errors.Is(err, errSilent):
		return "no heartbeat within the liveness timeout"
	case errors.Is(err, context.Canceled):
		return "server stopping"
	case errors.As(err, new(*authEndedError)), errors.As(err, new(*quarantinedError)):
		return err.Error()
	}
	return "connection lost: " + err.Error()
}

// readLoop reads until the socket ends, stamping last-seen on every frame.
func (w *worker) readLoop() error {
	for {
		m, release, err := w.conn.Read(w.ctx)
		if err != nil {
			if w.ctx.Err() != nil {
				return context.Cause(w.ctx) // the liveness pass or a shutdown ended it
			}
			w.malformed(err)
			return err
		}
		w.lastSeen.Store(w.srv.now().UnixNano())
		err = w.route(m)
		release()
		if err != nil {
			return err
		}
	}
}

// send sends on the session; a failure ends it (the read loop sees the closed socket).
func (w *worker) send(ctx context.Context, m wire.ServerMessage) error {
	return w.conn.Send(ctx, m)
}

// drainAndClose is the server's SIGTERM for this session.
func (w *worker) drainAndClose(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	w.conn.Send(ctx, &wire.ServerDraining{})
	w.conn.Close(ctx)
}

func capsString(c wire.GradientCapabilities) string {
	out := ""
	for _, f := range []struct {
		on   bool
		name string
	}{{c.Fetch, "fetch"}, {c.Eval, "eval"}, {c.Build, "build"}, {c.Federate, "federate"}} {
		if f.on {
			if out != "" {
				out += ","
			}
			out += f.name
		}
	}
	if out == "" {
		return "none"
	}
	return out
}
