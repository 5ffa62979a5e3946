package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/cachegc"
	"github.com/buildfleet/buildfleet/internal/gradient/cacheserve"
	"github.com/buildfleet/buildfleet/internal/gradient/loghub"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/ratelog"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/statussender"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/trigger"
	"github.com/buildfleet/buildfleet/internal/gradient/upstream"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// Defaults of gradient-server §6 and gradient-protocol §7 the server applies.
const (
	DefaultHeartbeatTimeout = 120 * time.Second // proto.workerHeartbeatTimeoutSecs
	DefaultMaxConnections   = 256               // proto.maxConnections
	poolEvery               = 5 * time.Second   // candidates re-offered to idle slots (gradient-server §6.1)
	reportQueue             = 64                // reports buffered per session (gradient-server §6.1)
	// maxVerifications bounds concurrent token verifications: anyone who knows a registered
	// worker ID can make the server run argon2 (19 MiB each), so memory stays bounded.
	maxVerifications = 4
	// hostileLogBurst and hostileLogEvery bound the log lines of what strangers do (malformed
	// openings, violations, refusals): 20 at once, then one a second.
	hostileLogBurst = 20
	hostileLogEvery = time.Second
)

// Config is a server's wiring and policy.
type Config struct {
	Store  store.Store
	NARs   *narstore.Store
	Logger *slog.Logger
	Now    func() time.Time
	// Rand is the API's randomness for tokens and keys (nil: crypto/rand).
	Rand io.Reader
	// HeartbeatTimeout drops a worker silent this long (0 turns the pass off).
	HeartbeatTimeout time.Duration
	Limits           Limits
	// RefuseInbound answers every worker 403 "server is not accepting connections".
	RefuseInbound  bool
	Federate       bool
	MaxConnections int
	// Secrets seals what the server keeps at rest: dial tokens and cache signing keys
	// (nil: registering a server-dialed worker is refused).
	Secrets *aeadbox.Box
	// DenyAnonymousCache is --anonymous-cache=false: public caches need an API key too,
	// over HTTP and on /cache/{cache}/proto (cachesession.go).
	DenyAnonymousCache bool
	// CacheKeyHost starts cache signing key names ("<host>-<cache>-1"; "" is "gradient").
	CacheKeyHost string
	// CacheSessionIdle closes an idle cache session (0: DefaultCacheSessionIdle).
	CacheSessionIdle time.Duration
	// PollInterval is the round of repository polls (gradient-server §11.2; 0: no polling).
	PollInterval time.Duration
	// GitRemote says how git reaches a project's repository (nil: its URL, no credential).
	GitRemote trigger.RemoteFunc
	// Retention is the cache's garbage collection, disk cap and sweeps (retention.go).
	Retention RetentionConfig
	// PublicURL is where browsers reach this server; commit statuses link to
	// <PublicURL>/evaluations/<id> (gradient-server §12).
	PublicURL string
}

// Server is a running gradient-server's worker side.
type Server struct {
	cfg Config
	log *slog.Logger
	// hostile is the log of what strangers do, at a bounded rate (ratelog); hostileLog owns
	// its budget and counts the lines it dropped.
	hostile    *slog.Logger
	hostileLog *ratelog.Handler
	now        func() time.Time
	sessions   *registry
	conns      chan struct{} // connection slots (proto.maxConnections)
	verifies   chan struct{} // concurrent argon2 verifications (each costs ~19 MiB)
	uploads    *cacheserve.Admission
	counters   Counters
	// cacheCounters are shared by every session's cache traffic (cacheserve), so /metrics
	// shows server totals.
	cacheCounters cacheserve.Counters
	// upstreams answers workers' external cache queries from the caches' upstream
	// substituters (gradient-server §14).
	upstreams *upstream.Resolver

	kick     chan struct{}
	ctx      context.Context // sessions live under it; canceled by Shutdown
	cancel   context.CancelFunc
	stopping atomic.Bool
	wg       sync.WaitGroup // running sessions
	claimMu  sync.Mutex     // one claim at a time among this server's sessions (dispatch.go)
	changes  changeLog      // registration changes by worker ID, for reauth (reauth.go)

	cacheFront *cacheFront // binary cache and cache sessions (cachesession.go)
	quarantine *quarantine // workers whose set-up keeps failing their jobs (quarantine.go)
	logs       *loghub.Hub // build log chunks to the API's followers (gradient-server §16)
	triggers   *trigger.Service
	gc         *cachegc.Collector
	disk       diskMeter         // the disk cap's estimate (retention.go)
	retained   retentionCounters // what the retention passes did (retention.go)
	statuses   *statussender.Sender
}

// New builds a server. Call Recover before serving the first session.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	ctx, cancel := context.WithCancel(context.Background())
	hostileLog := ratelog.New(cfg.Logger.Handler(), ratelog.Config{Burst: hostileLogBurst, Every: hostileLogEvery, Now: cfg.Now})
	s := &Server{cfg: cfg, log: cfg.Logger, hostile: slog.New(hostileLog), hostileLog: hostileLog, now: cfg.Now,
		sessions: newRegistry(), cacheFront: newCacheFront(cfg), conns: make(chan struct{}, cfg.MaxConnections),
		verifies: make(chan struct{}, maxVerifications), uploads: cacheserve.NewAdmission(cacheserve.AdmissionConfig{Now: cfg.Now}),
		kick: make(chan struct{}, 1), ctx: ctx, cancel: cancel, quarantine: newQuarantine(), logs: loghub.New(loghub.Limits{}),
		statuses: newStatusSender(cfg),
		upstreams: upstream.NewResolver(func(ctx context.Context, caches []string) ([]store.CacheUpstream, error) {
			return cfg.Store.ListCacheUpstreams(ctx, caches)
		}, nil, cfg.Logger)}
	s.triggers = s.newTriggers()
	s.gc = newCollector(s)
	return s
}

// HostileLog is the log of what strangers do, at a bounded rate; the HTTP front logs its
// refusals through it too.
func (s *Server) HostileLog() *slog.Logger { return s.hostile }

// socketOptions are the wsconn options of an accepted connection from remote: the socket
// layer's refusals (size, text, agreement) go to the bounded log with the address.
func (s *Server) socketOptions(remote string, sessionLimit int) wsconn.Options {
	return wsconn.Options{Logger: s.hostile.With("remote", remote), SessionReadLimit: sessionLimit}
}

// Recover runs recover_interrupted_work (gradient-server §6.6) in one transaction; call it
// before the first session is served.
func (s *Server) Recover(ctx context.Context) (store.Recovery, error) {
	r, err := s.cfg.Store.RecoverInterruptedWork(ctx)
	if err != nil {
		return r, err
	}
	s.log.Info("recovered interrupted work", "assignments", r.Assignments, "attempts", r.Attempts,
		"builds", r.Builds, "evaluations", r.Evaluations)
	return r, nil
}

// Handler serves /proto, /healthz, the binary cache and cache sessions under /cache/{cache}/,
// and /api/v1/.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /proto", s.serveProto)
	mux.HandleFunc("GET /healthz", s.serveHealth)
	mux.HandleFunc("GET /cache/{cache}/proto", s.serveCacheSession)
	s.cacheFront.http.Register(mux)
	mux.Handle(api.Prefix+"/", api.New(s.apiConfig()))
	return mux
}

// apiConfig is the API's wiring, the same on --listen and beside the web UI (webui.go).
func (s *Server) apiConfig() api.Config {
	return api.Config{Store: s.cfg.Store, Live: s, Logger: s.log, Now: s.now, Rand: s.cfg.Rand,
		SealDialToken: s.sealDialToken(), CacheKeys: s.cacheFront.apiKeys(), Follow: api.FollowConfig{Hub: s.logs},
		Triggers: s.triggers, RepoSecrets: s.cfg.Secrets, GC: s.CollectGarbage, SealStatusSecret: s.sealStatusSecret()}
}

// takeConnSlot takes one of the proto.maxConnections slots every session holds (worker
// sessions either way round and cache sessions alike), counting a refusal when all are taken.
func (s *Server) takeConnSlot() bool {
	select {
	case s.conns <- struct{}{}:
		return true
	default:
		s.counters.ConnectionsRefusedFull.Add(1)
		return false
	}
}

func (s *Server) releaseConnSlot() { <-s.conns }

// sealDialToken is the API's sealer for server-dialed workers' tokens, nil without Secrets.
func (s *Server) sealDialToken() func(string) ([]byte, error) {
	if s.cfg.Secrets == nil {
		return nil
	}
	return func(token string) ([]byte, error) {
		return s.cfg.Secrets.Seal(aeadbox.PurposeDialToken, []byte(token))
	}
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if s.stopping.Load() {
		http.Error(w, "draining\n", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}

// Run drives the background passes (dispatch kicks every 5 s and on demand, liveness, and
// dialing the workers registered with a URL) until ctx ends.
func (s *Server) Run(ctx context.Context) {
	go s.runDialer(ctx)    // server-dialed workers (dialer.go)
	go s.runRetention(ctx) // sweeps, cache gc and the disk cap (retention.go)
	go s.triggers.RunPoller(ctx, s.cfg.PollInterval)
	go s.statuses.Run(ctx) // commit statuses and webhook events (statuses.go)
	pool := time.NewTicker(poolEvery)
	defer pool.Stop()
	var liveness <-chan time.Time
	if s.cfg.HeartbeatTimeout > 0 {
		t := time.NewTicker(max(s.cfg.HeartbeatTimeout/8, time.Second))
		defer t.Stop()
		liveness = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.ctx.Done():
			return
		case <-pool.C:
			s.offerIdleSlots(ctx)
		case <-s.kick:
			s.offerIdleSlots(ctx)
		case <-liveness:
			s.dropSilentWorkers()
		}
	}
}

// Kick asks the dispatcher to offer queued jobs to idle slots now (a new evaluation, a
// startable build).
func (s *Server) Kick() {
	s.statuses.Kick() // a new evaluation or a state change may have queued statuses
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Shutdown is SIGTERM (gradient-server §6.6, gradient-server §10.6): every session gets
// Draining and is closed at once; their work in flight is left for recovery at the next
// start.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopping.Store(true)
	s.logs.Close() // followed logs end, so the HTTP server's shutdown need not wait for them
	for _, w := range s.sessions.all() {
		w.drainAndClose(ctx)
	}
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("sessions still closing at the stop deadline")
	}
}

// Counters exposes the server's counters.
func (s *Server) Counters() *Counters { return &s.counters }

// recordOffline keeps a worker's last failure in the store (gradient-protocol §4.4
// bookkeeping).
func (s *Server) recordOffline(workerID, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.cfg.Store.MarkWorkerOffline(ctx, workerID, reason); err != nil {
		s.log.Warn("recording a worker's offline reason", "worker", workerID, "err", err)
	}
}

// authorityConfig is the handshake policy of this server.
func (s *Server) authorityConfig() session.AuthorityConfig {
	return session.AuthorityConfig{AcceptInbound: !s.cfg.RefuseInbound, Federate: s.cfg.Federate}
}
