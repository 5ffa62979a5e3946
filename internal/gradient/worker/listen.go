package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// DefaultListenAddr is the listener's address when discoverable mode is turned on without
// one (gradient-protocol §1.1: port 3100 on loopback).
const DefaultListenAddr = "127.0.0.1:3100"

// Listener limits. One server session runs at a time (the worker's build slots belong to
// one session); a few handshakes may be pending at once, so a stray client cannot keep the
// real server out, and token verification (argon2 costs ~19 MiB) runs one at a time.
const (
	maxPendingHandshakes = 8
	listenHeaderTimeout  = 10 * time.Second
)

// listener serves server-dialed sessions (gradient-protocol §4.1 as_dialed) on GET /proto.
type listener struct {
	w          *Worker
	tokens     *serverTokensFile
	stop       context.Context // the worker's lifetime: a running session is stopped with it
	live       chan struct{}   // the one running session
	handshakes chan struct{}
	verifies   chan struct{}
	wg         sync.WaitGroup
}

// Listen serves sessions the server dials (discoverable mode) on ln until ctx ends: the
// server's Authenticate is checked against Config.AcceptedServerTokensFile (every server is
// accepted without one, with a warning now), and an accepted session runs the same job loop
// as a session the worker dialed (Serve). A malformed tokens file is an error before
// anything is served. When ctx ends, a running session is stopped as on SIGTERM, then Listen
// closes ln and returns nil.
func (w *Worker) Listen(ctx context.Context, ln net.Listener) error {
	tokens, err := loadServerTokensFile(w.cfg.AcceptedServerTokensFile, w.cfg.Logger)
	if err != nil {
		ln.Close()
		return err
	}
	if tokens.path == "" {
		w.cfg.Logger.Warn("worker: no accepted server tokens file: every server that dials this worker is accepted")
	}
	l := &listener{w: w, tokens: tokens, stop: ctx, live: make(chan struct{}, 1),
		handshakes: make(chan struct{}, maxPendingHandshakes), verifies: make(chan struct{}, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /proto", l.serveProto)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: listenHeaderTimeout}
	go w.watchPeers(ctx)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	w.cfg.Logger.Info("worker: listening for the server", "addr", ln.Addr().String())
	select {
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("worker: listener: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_ = hs.Shutdown(sctx) // upgraded sessions are hijacked: wg tracks them
	l.wg.Wait()
	return nil
}

// listenAndServe is Run in discoverable mode.
func (w *Worker) listenAndServe(ctx context.Context) error {
	ln, err := net.Listen("tcp", w.cfg.Listen)
	if err != nil {
		return fmt.Errorf("worker: listen: %w", err)
	}
	return w.Listen(ctx, ln)
}

func (l *listener) serveProto(rw http.ResponseWriter, r *http.Request) {
	l.wg.Add(1) // before the upgrade: Listen waits for hijacked sessions with wg
	defer l.wg.Done()
	if l.stop.Err() != nil {
		http.Error(rw, "worker is stopping\n", http.StatusServiceUnavailable)
		return
	}
	if len(l.live) > 0 {
		http.Error(rw, "a server session is already running\n", http.StatusServiceUnavailable)
		return
	}
	select {
	case l.handshakes <- struct{}{}:
	default:
		http.Error(rw, "too many pending handshakes\n", http.StatusServiceUnavailable)
		return
	}
	offer := l.w.sessionOffer()
	l.w.health.unavailable(l.w.cfg.Offer).Set(rw.Header())
	conn, err := wsconn.AcceptServer(rw, r, wsconn.Options{Logger: l.w.cfg.Logger})
	if err != nil {
		<-l.handshakes
		l.w.cfg.Logger.Debug("worker: websocket upgrade failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	role, res, err := l.handshake(conn, offer)
	<-l.handshakes
	if err != nil {
		l.refused(r.RemoteAddr, err)
		return
	}
	l.serve(conn, role, res, r.RemoteAddr)
}

// handshake runs the dialed role: Authenticate, token check, InitConnection, InitAck.
func (l *listener) handshake(conn *wsconn.WorkerConn, offer wire.GradientCapabilities) (session.Dialed, session.Result, error) {
	role, out := session.NewDialed(session.DialedConfig{WorkerID: l.w.cfg.WorkerID, Capabilities: offer})
	return handshake.Run(l.stop, conn, role, out, l.answer)
}

// answer verifies the server's tokens; the dialed role asks nothing else.
func (l *listener) answer(ctx context.Context, need session.Need) (session.Event, error) {
	v, ok := need.(session.VerifyTokens)
	if !ok {
		return nil, fmt.Errorf("worker: the dialed role asked %T", need)
	}
	select {
	case l.verifies <- struct{}{}:
		defer func() { <-l.verifies }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return session.TokensAnswer{Valid: l.tokens.current().Valid(v.Tokens)}, nil
}

func (l *listener) refused(remote string, err error) {
	var ended *handshake.EndedError
	if errors.As(err, &ended) {
		l.w.cfg.Logger.Warn("worker: refused a server", "remote", remote, "code", ended.End.Code, "reason", ended.End.String())
		return
	}
	l.w.cfg.Logger.Warn("worker: server handshake failed", "remote", remote, "err", err)
}

// serve runs the job loop on an accepted session, unless another session won the race to
// run first: that one keeps the worker, and this one is drained at once.
func (l *listener) serve(conn *wsconn.WorkerConn, role session.Dialed, res session.Result, remote string) {
	log := l.w.cfg.Logger
	select {
	case l.live <- struct{}{}:
		defer func() { <-l.live }()
	default:
		log.Warn("worker: a server session is already running; draining the new one", "remote", remote)
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		_ = conn.Send(ctx, &wire.ClientDraining{})
		_ = conn.Close(ctx)
		return
	}
	log.Info("worker: server session running", "remote", remote, "authorized", res.Authorized, "failed", len(res.Failed),
		"fetch", res.Capabilities.Fetch, "eval", res.Capabilities.Eval, "build", res.Capabilities.Build)
	end := l.w.Serve(l.stop, conn, session.Erase(role), res)
	log.Info("worker: server session ended", "remote", remote, "reason", end.Reason)
}
