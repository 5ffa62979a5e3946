package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/binarycache"
	"github.com/buildfleet/buildfleet/internal/gradient/cacheserve"
	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// Limits of a /cache/{cache}/proto session (gradient-protocol §7.1).
const (
	// MaxAnonymousCacheSessionsPerIP is proto.anonymousCache.maxConnectionsPerIp.
	MaxAnonymousCacheSessionsPerIP = 32
	// DefaultCacheSessionIdle closes a cache session this long without a message while no
	// NAR transfer is in flight.
	DefaultCacheSessionIdle = 120 * time.Second
)

// cacheFront is the server's read-only cache surface: the HTTP binary cache for Nix and
// the admission of /cache/{cache}/proto sessions (auth, the per-IP count).
type cacheFront struct {
	http *binarycache.Handler
	keys *binarycache.Keys // nil without Config.Secrets: caches are made without keys
	idle time.Duration

	mu   sync.Mutex
	anon map[string]int // client IP -> live anonymous cache sessions
}

func newCacheFront(cfg Config) *cacheFront {
	f := &cacheFront{idle: cfg.CacheSessionIdle, anon: map[string]int{}}
	if f.idle <= 0 {
		f.idle = DefaultCacheSessionIdle
	}
	if cfg.Secrets != nil {
		f.keys = binarycache.NewKeys(cfg.Secrets, cfg.CacheKeyHost, cfg.Rand)
	}
	f.http = binarycache.New(binarycache.Config{Store: cfg.Store, NARs: cfg.NARs, Keys: f.keys,
		DenyAnonymous: cfg.DenyAnonymousCache, Logger: cfg.Logger})
	return f
}

// apiKeys is the API's CacheKeys, nil (no keys) without Secrets.
func (f *cacheFront) apiKeys() api.CacheKeys {
	if f.keys == nil {
		return nil
	}
	return f.keys
}

// holdAnonymous counts an anonymous session from ip; false when ip has its 32.
func (f *cacheFront) holdAnonymous(ip string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.anon[ip] >= MaxAnonymousCacheSessionsPerIP {
		return false
	}
	f.anon[ip]++
	return true
}

func (f *cacheFront) releaseAnonymous(ip string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.anon[ip]--; f.anon[ip] <= 0 {
		delete(f.anon, ip)
	}
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// serveCacheSession admits a /cache/{cache}/proto upgrade (gradient-protocol §7.1): the
// cache's access rule is checked before the upgrade, then a connection slot (shared with
// /proto) and, for an anonymous caller, one of its IP's 32; HTTP 503 when either is full.
func (s *Server) serveCacheSession(w http.ResponseWriter, r *http.Request) {
	f := s.cacheFront
	if s.stopping.Load() {
		http.Error(w, "server is stopping\n", http.StatusServiceUnavailable)
		return
	}
	acc, err := f.http.Admit(r, r.PathValue("cache"))
	if err != nil {
		f.http.WriteRefusal(w, r, err)
		return
	}
	if !s.takeConnSlot() {
		http.Error(w, "too many connections\n", http.StatusServiceUnavailable)
		return
	}
	defer s.releaseConnSlot()
	if acc.Anonymous() {
		ip := clientIP(r)
		if !f.holdAnonymous(ip) {
			s.counters.CacheSessionsRefusedIP.Add(1)
			http.Error(w, "too many anonymous cache sessions from this address\n", http.StatusServiceUnavailable)
			return
		}
		defer f.releaseAnonymous(ip)
	}
	conn, err := wsconn.AcceptWorker(w, r, s.socketOptions(r.RemoteAddr, wire.SafeInflightMessageSize))
	if err != nil {
		s.log.Debug("cache session upgrade failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	defer conn.Abort() // whatever way the session ends, its socket goes with it
	s.wg.Add(1)
	defer s.wg.Done()
	cs := &cacheSession{srv: s, front: f, conn: conn, acc: acc, remote: r.RemoteAddr,
		log: s.log.With("cache", acc.Cache.Name, "remote", r.RemoteAddr, "anonymous", acc.Anonymous())}
	cs.run()
}

// cacheSession is one read-only session scoped to one cache.
type cacheSession struct {
	srv      *Server
	front    *cacheFront
	conn     *wsconn.ServerConn
	acc      binarycache.Access
	remote   string
	log      *slog.Logger
	cache    *cacheserve.Session
	lastSeen atomic.Int64 // unix nanoseconds of the last message or NAR transfer
}

func (cs *cacheSession) run() {
	ctx, cancel := context.WithCancel(cs.srv.ctx)
	defer cancel()
	if err := cs.handshake(ctx); err != nil {
		cs.log.Debug("cache session handshake failed", "err", err)
		return
	}
	cs.srv.counters.CacheSessions.Add(1)
	readOnly := []string{cs.acc.Cache.ID}
	cs.cache = cacheserve.New(cacheserve.Config{Paths: cs.srv.cfg.Store, NARs: cs.srv.cfg.NARs, Send: cs.conn.Send,
		Scope: func() ([]string, []string) { return readOnly, nil }, Admission: cs.srv.uploads, ReadOnly: true,
		Logger: cs.log, Now: cs.srv.now, Counters: &cs.srv.cacheCounters})
	defer cs.cache.Close()
	cs.touch()
	go cs.watchIdle(ctx)
	err := cs.readLoop(ctx)
	cs.log.Debug("cache session ended", "err", err)
	closeCtx, done := context.WithTimeout(context.Background(), 2*time.Second)
	defer done()
	cs.conn.Close(closeCtx)
}

// handshake: version agreement (lazily, on the first read), then InitConnection ->
// InitAck{caps: cache, no peers}. No challenge.
func (cs *cacheSession) handshake(ctx context.Context) error {
	hctx, cancel := wsconn.HandshakeContext(ctx)
	defer cancel()
	m, release, err := cs.conn.Read(hctx)
	if err != nil {
		cs.malformed(err, "handshake")
		return err
	}
	release()
	if _, ok := m.(*wire.InitConnection); !ok {
		cs.conn.Reject(hctx, session.CodeUnexpected, session.ReasonExpectedInitConnection)
		return fmt.Errorf("first message %T", m)
	}
	ack := &wire.InitAck{Capabilities: session.CacheSessionCapabilities(), AuthorizedPeers: []string{}, FailedPeers: []wire.FailedPeer{}}
	if err := cs.conn.Send(hctx, ack); err != nil {
		return err
	}
	cs.conn.EnterSession()
	return nil
}

func (cs *cacheSession) touch() { cs.lastSeen.Store(cs.srv.now().UnixNano()) }

// watchIdle closes the session (1000) once it has been idle for the limit: no message and
// no NAR transfer in flight.
func (cs *cacheSession) watchIdle(ctx context.Context) {
	tick := time.NewTicker(min(max(cs.front.idle/8, 10*time.Millisecond), 5*time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-cs.conn.Done():
			return
		case <-tick.C:
		}
		if cs.cache.Busy() {
			cs.touch()
			continue
		}
		if cs.srv.now().Sub(time.Unix(0, cs.lastSeen.Load())) >= cs.front.idle {
			cs.log.Debug("closing an idle cache session")
			closeCtx, done := context.WithTimeout(context.Background(), 2*time.Second)
			cs.conn.Close(closeCtx)
			done()
			return
		}
	}
}

// malformed answers a read error: a frame that does not decode gets Error 400 and a close
// (handshake.Malformed), any other failure drops the socket.
func (cs *cacheSession) malformed(err error, when string) {
	if !handshake.Malformed(cs.conn, err) {
		cs.conn.Abort()
		return
	}
	cs.srv.counters.FramesMalformed.Add(1)
	cs.srv.hostile.Warn("undecodable frame on a cache session: answered Error 400 and closed",
		"remote", cs.remote, "during", when, "err", err)
}

// errCacheViolation ends a cache session that sent InitConnection again; the Error 400 that
// says so is queued, and run's close sends it.
var errCacheViolation = errors.New("InitConnection after the handshake")

// readLoop serves messages until the socket ends or a frame does not decode.
func (cs *cacheSession) readLoop(ctx context.Context) error {
	for {
		m, release, err := cs.conn.Read(ctx)
		if err != nil {
			cs.malformed(err, "session")
			return err
		}
		cs.touch()
		err = cs.route(ctx, m)
		release()
		if err != nil {
			return err
		}
	}
}

// route serves CacheQuery (Normal, Pull), NarRequest and its resume; everything else is
// refused with Reject 403 and the session goes on (gradient-protocol §7.1, as upstream
// does).
func (cs *cacheSession) route(ctx context.Context, m wire.ClientMessage) error {
	switch m := m.(type) {
	case *wire.CacheQuery:
		if m.Mode != wire.QueryModeNormal && m.Mode != wire.QueryModePull {
			return cs.refuse(ctx, "only Normal and Pull queries on a cache session")
		}
	case *wire.NarRequest, *wire.NarRequestResume:
	case *wire.InitConnection: // gradient-protocol §1.4: Error 400, and the session ends
		cs.srv.counters.ProtocolViolations.Add(1)
		cs.srv.hostile.Warn("protocol violation on a cache session: answered Error 400 and closed", "remote", cs.remote)
		_ = cs.conn.Send(ctx, &wire.ServerError{Code: session.CodeUnexpected, Message: session.MessageUnexpectedInitConnection})
		return errCacheViolation
	default:
		return cs.refuse(ctx, strings.TrimPrefix(fmt.Sprintf("%T", m), "*wire.")+" is not allowed on a cache session")
	}
	_, err := cs.cache.Handle(ctx, m)
	if errors.Is(err, cacheserve.ErrForbidden) {
		return cs.refuse(ctx, "not allowed on a cache session")
	}
	return err
}

func (cs *cacheSession) refuse(ctx context.Context, reason string) error {
	cs.srv.counters.CacheMessagesRefused.Add(1)
	return cs.conn.Send(ctx, &wire.ServerReject{Code: session.CodeForbidden, Reason: reason})
}
