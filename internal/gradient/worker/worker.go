package worker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// Worker is one gradient worker process: its identity, peers file and executor, serving one
// session at a time.
type Worker struct {
	cfg Config
	nix *nixexec.Nix

	peersMu sync.Mutex
	peers   peersFile
	// peersChanged wakes the live session when the peers file changed.
	peersChanged chan session.PeerTokens

	requestID atomic.Uint64 // UploadRequest ids: a counter per worker (gradient-protocol §7.3)
	uploads   chan struct{} // worker-wide upload slots
	caps      capabilitiesCache
	health    *nixHealth
}

// New prepares a worker: it reads the peers file (a missing or bad file is an error at
// start) and releases GC roots left by dead worker processes.
func New(cfg Config) (*Worker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	pf, err := loadPeersFile(cfg.PeersFile)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(cfg.BaseDir, "jobs"), 0o755); err != nil {
		return nil, fmt.Errorf("worker: base dir: %w", err)
	}
	if err := cfg.Nix.ReleaseStaleRoots(); err != nil {
		cfg.Logger.Warn("worker: could not release stale GC roots", "err", err)
	}
	return &Worker{cfg: cfg, nix: cfg.Nix, peers: pf, peersChanged: make(chan session.PeerTokens, 1),
		uploads: make(chan struct{}, maxUploadSlots), health: newNixHealth(cfg.Nix, cfg.Logger, cfg.BaseDir)}, nil
}

// ID is the worker ID.
func (w *Worker) ID() string { return w.cfg.WorkerID }

// Tokens is the peers file as last read.
func (w *Worker) Tokens() session.PeerTokens {
	w.peersMu.Lock()
	defer w.peersMu.Unlock()
	return w.peers.tokens
}

// Run dials the server and serves sessions until ctx ends, reconnecting with backoff (1 s
// after a served session, doubling after a refused or drained one, up to 60 s). When ctx
// ends during a session, the session is stopped as on SIGTERM (see Serve). It returns nil
// after a stop. With Config.Listen set it waits for the server to dial instead (Listen).
//
// Before it offers anything it probes its Nix (nixHealth), and it offers only what works;
// a probe that later finds otherwise ends the session, and the next one offers what works then.
func (w *Worker) Run(ctx context.Context) error {
	if w.cfg.Listen == "" && w.cfg.ServerURL == "" {
		return errors.New("worker: no server URL")
	}
	w.health.ensure(ctx)
	go w.health.watch(ctx, w.cfg.Offer, w.cfg.ProbeInterval)
	if w.cfg.Listen != "" {
		return w.listenAndServe(ctx)
	}
	go w.watchPeers(ctx)
	var backoff Backoff
	for ctx.Err() == nil {
		w.health.ensure(ctx)
		outcome := w.connectOnce(ctx)
		if ctx.Err() != nil {
			break
		}
		delay := backoff.After(outcome)
		w.cfg.Logger.Info("worker: reconnecting", "in", delay)
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
	}
	return nil
}

// connectOnce dials, runs the peer handshake and serves the session.
func (w *Worker) connectOnce(ctx context.Context) SessionOutcome {
	log := w.cfg.Logger
	offer, dial := w.sessionOffer(), w.cfg.Dial
	dial.Header = w.upgradeHeader(dial.Header)
	conn, err := wsconn.DialServer(ctx, w.cfg.ServerURL, dial)
	if err != nil {
		log.Warn("worker: cannot connect", "server", w.cfg.ServerURL, "err", err)
		return Refused
	}
	role, out := session.NewPeer(session.PeerConfig{WorkerID: w.cfg.WorkerID, Capabilities: offer, Tokens: w.Tokens()})
	role, res, err := handshake.Run(ctx, conn, role, out, nil)
	if err != nil {
		var ended *handshake.EndedError
		if errors.As(err, &ended) && ended.End.Kind == session.EndDrained {
			log.Warn("worker: server is draining")
			return Drained
		}
		log.Warn("worker: handshake failed", "err", err)
		conn.Abort()
		return Refused
	}
	log.Info("worker: session running", "authorized", res.Authorized, "failed", len(res.Failed),
		"fetch", res.Capabilities.Fetch, "eval", res.Capabilities.Eval, "build", res.Capabilities.Build)
	end := w.Serve(ctx, conn, session.Erase(role), res)
	log.Info("worker: session ended", "reason", end.Reason)
	if end.Drained {
		return Drained
	}
	return Served
}

// sessionOffer is what a new session offers: the configured capabilities the last probe found
// working. It is recorded, so a probe that changes it ends the session.
func (w *Worker) sessionOffer() wire.GradientCapabilities {
	offer := w.health.offer(w.cfg.Offer)
	w.health.offering(offer)
	return offer
}

// upgradeHeader is base plus the report of what this worker withholds and why.
func (w *Worker) upgradeHeader(base http.Header) http.Header {
	h := base.Clone()
	if h == nil {
		h = http.Header{}
	}
	w.health.unavailable(w.cfg.Offer).Set(h)
	return h
}

// watchPeers polls the peers file and hands changes to the live session, which asks the
// server for a reauth (gradient-protocol §4.3).
func (w *Worker) watchPeers(ctx context.Context) {
	if w.cfg.PeersFile == "" {
		return
	}
	t := time.NewTicker(w.cfg.PeersPollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pf, err := loadPeersFile(w.cfg.PeersFile)
		if err != nil {
			w.cfg.Logger.Warn("worker: peers file unreadable, keeping the tokens read before", "err", err)
			continue
		}
		w.peersMu.Lock()
		changed := pf.digest != w.peers.digest
		if changed {
			w.peers = pf
		}
		w.peersMu.Unlock()
		if !changed {
			continue
		}
		w.cfg.Logger.Info("worker: peers file changed")
		select { // keep only the newest change
		case <-w.peersChanged:
		default:
		}
		w.peersChanged <- pf.tokens
	}
}
