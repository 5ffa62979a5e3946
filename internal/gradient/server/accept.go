package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// serveProto runs one worker-dialed session: agreement, the authority handshake, then the
// session until either side ends it.
func (s *Server) serveProto(w http.ResponseWriter, r *http.Request) {
	if s.stopping.Load() {
		http.Error(w, "server is stopping\n", http.StatusServiceUnavailable)
		return
	}
	if !s.takeConnSlot() {
		http.Error(w, "too many connections\n", http.StatusServiceUnavailable)
		return
	}
	defer s.releaseConnSlot()
	conn, err := wsconn.AcceptWorker(w, r, s.socketOptions(r.RemoteAddr, 0))
	if err != nil {
		s.log.Debug("websocket upgrade failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	// Every way out of this session leaves the socket closed: the paths below close it
	// gracefully where they can, and this drops whatever is left.
	defer conn.Abort()
	s.wg.Add(1)
	defer s.wg.Done()
	a := &answerer{s: s}
	role, out := session.NewAuthority(s.authorityConfig())
	role, res, err := handshake.Run(s.ctx, conn, role, out, a.answer)
	if err != nil {
		s.handshakeFailed(a, err, r.RemoteAddr)
		return
	}
	wk := newWorker(s, conn, res, a.identity, r.RemoteAddr)
	wk.auth = newSessionAuth(session.Erase(role), a.answer, a.identity.Facts)
	s.sessions.attach(wk)
	s.catchUp(wk, a.changesSeen)
	wk.run()
}

// handshakeFailed releases a claimed slot and keeps the offline reason the bookkeeping rules
// allow (only for registered IDs, so unknown IDs cannot fill the worker table).
func (s *Server) handshakeFailed(a *answerer, err error, remote string) {
	if a.claimed != "" {
		s.sessions.release(a.claimed, nil)
	}
	var ended *handshake.EndedError
	if !errors.As(err, &ended) {
		s.counters.HandshakesFailed.Add(1)
		if errors.As(err, new(*wire.DecodeError)) {
			s.counters.HandshakesMalformed.Add(1)
			s.hostile.Warn("malformed handshake message: answered Error 400 and closed", "remote", remote, "err", err)
			return
		}
		s.log.Debug("handshake broke off", "remote", remote, "err", err)
		return
	}
	s.counters.refused(ended.End.Code)
	if id, reason, keep := session.OfflineReason(ended.End); keep {
		s.recordOffline(id, reason)
	}
	s.log.Info("worker refused", "worker", ended.End.WorkerID, "code", ended.End.Code, "reason", ended.End.Reason)
}

// answerer answers the authority role's needs from the store for one handshake.
type answerer struct {
	s        *Server
	identity store.WorkerIdentity
	claimed  string
	// changesSeen is the worker's registration-change count read before its facts were.
	changesSeen uint64
}

func (a *answerer) answer(ctx context.Context, need session.Need) (session.Event, error) {
	switch n := need.(type) {
	case session.LookupWorker:
		a.changesSeen = a.s.changes.at(n.WorkerID)
		id, err := a.s.cfg.Store.WorkerIdentity(ctx, n.WorkerID)
		if err != nil {
			return nil, fmt.Errorf("reading worker %s: %w", n.WorkerID, err)
		}
		a.identity = id
		return session.FactsAnswer{Facts: id.Facts}, nil
	case session.VerifyTokens:
		select {
		case a.s.verifies <- struct{}{}:
			defer func() { <-a.s.verifies }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		var valid []string
		for _, t := range n.Tokens {
			if hash, ok := a.identity.TokenHashes[t.PeerID]; ok && peertoken.Verify(hash, t.Token) {
				valid = append(valid, t.PeerID)
			}
		}
		return session.TokensAnswer{Valid: valid}, nil
	case session.ClaimSession:
		if !a.s.sessions.claim(n.WorkerID) {
			return session.ClaimAnswer{Claimed: false}, nil
		}
		a.claimed = n.WorkerID
		return session.ClaimAnswer{Claimed: true}, nil
	}
	return nil, fmt.Errorf("handshake asked %T, which the server does not answer", need)
}
