package peerconn

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
)

// UnprovenLogInterval paces the log lines of refusals before the other end
// proved an id: anything on the network can provoke them, and an id nobody
// proved is not worth printing (pace-consensus §7.3.5).
const UnprovenLogInterval = time.Minute

// refusalLog writes an endpoint's refusal lines. Only member ids, the
// address, reasons and (for a revoked key) the key's text reach it.
type refusalLog struct {
	log  *slog.Logger
	now  func() time.Time
	self string

	mu         sync.Mutex
	quietUntil time.Time
	suppressed int
}

// unproven logs at most once per UnprovenLogInterval, saying how many
// lines it held back since the last.
func (l *refusalLog) unproven(msg string, args ...any) {
	if l.log == nil {
		return
	}
	l.mu.Lock()
	now := l.now()
	if now.Before(l.quietUntil) {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	held := l.suppressed
	l.suppressed, l.quietUntil = 0, now.Add(UnprovenLogInterval)
	l.mu.Unlock()
	if held > 0 {
		args = append(args, "held_back", held)
	}
	l.log.Warn(msg, args...)
}

// proven logs every time: the ids in it were proven.
func (l *refusalLog) proven(msg string, args ...any) {
	if l.log != nil {
		l.log.Warn(msg, args...)
	}
}

// acceptRefused logs a handshake the acceptor refused. A revoked key is
// logged whole, with the id it proved; a wrong target or a shared identity
// names both ids and the address; every other refusal only the address.
func (l *refusalLog) acceptRefused(addr string, j peerlink.Judgement, err error) {
	reason := peerlink.Reason(err)
	switch {
	case reason == "":
		return // nothing refused: the dialler went away, or the caller cancelled
	case errors.Is(err, peerlink.ErrDiallerKeyRevoked):
		l.proven("consensus connection refused: the dialler's key is revoked", "reason", reason,
			"member", j.Dialler.ID, "key", edkey.Text(j.Dialler.Key), "from", addr)
	case j.Verdict != nil:
		l.proven("consensus connection refused", "reason", reason, "member", j.Dialler.ID,
			"target", j.Target, "self", l.self, "from", addr)
	default:
		l.unproven("consensus connection refused", "reason", reason, "from", addr)
	}
}

// dialRefused logs a dial this end gave up on. A verified verdict names
// the member that signed it (the error's text carries both ids); before
// one, only the target this node meant and the address.
func (l *refusalLog) dialRefused(target, addr string, err error) {
	reason := peerlink.Reason(err)
	switch {
	case reason == "":
		return
	case isAny(err, peerlink.ErrWrongTarget, peerlink.ErrOwnID, peerlink.ErrDiallerKeyRevoked, peerlink.ErrAcceptorKeyRevoked):
		l.proven("consensus dial refused", "reason", reason, "target", target, "self", l.self,
			"address", addr, "error", err.Error())
	default:
		l.unproven("consensus dial refused", "reason", reason, "target", target, "address", addr)
	}
}

// linkEnded logs a proven link ended by a refusal.
func (l *refusalLog) linkEnded(s *peerlink.Session, err error) {
	l.proven("consensus link ended", "reason", peerlink.Reason(err), "role", s.Role().String(),
		"self", s.Self().ID, "peer", s.Peer().ID, "error", err.Error())
}

func isAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
