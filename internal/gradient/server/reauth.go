package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// Reauth on a running session (gradient-protocol §4.3). The handshake's role stays with the
// session: it is stepped for ReauthRequest and AuthResponse from the read loop and for the
// server's own trigger (RegistrationChanged), one step at a time under sessionAuth.mu. Its
// Needs are answered by the same answerer the handshake used; Reauthorized grows the
// session's grants (never shrinks them) and offers the new projects' jobs; Ended (all
// registrations deactivated, a disabled team worker) sends the Reject and ends the session.

// reauthAnswerTimeout bounds the worker's answer to a reauth challenge, as the handshake's
// own reads are bounded. Without it a worker that never answers would hold every queued
// trigger — a deactivation among them — for as long as it stays connected.
var reauthAnswerTimeout = wsconn.HandshakeTimeout

// reauthCloseTimeout bounds the Reject and close handshake of a session a reauth ends.
const reauthCloseTimeout = 3 * time.Second

// errReauthUnanswered ends a session whose worker left a reauth challenge unanswered.
var errReauthUnanswered = errors.New("no AuthResponse to a reauth challenge within the handshake limit")

// authEndedError ends a session whose role ended during a reauth round.
type authEndedError struct{ end session.End }

func (e *authEndedError) Error() string { return e.end.String() }

// sessionAuth is a running session's handshake role and what its reauth rounds need.
type sessionAuth struct {
	mu       sync.Mutex
	role     session.Stepper // session.Authority (worker dialed in) or session.Dialer
	answer   handshake.Answerer
	facts    session.WorkerFacts // the latest lookup's
	rounds   uint64              // challenges sent
	awaiting uint64              // the round whose challenge is unanswered; 0 for none
	done     bool                // the role ended; nothing more is stepped
	pending  atomic.Bool         // a trigger's goroutine is on its way to step
}

func newSessionAuth(role session.Stepper, answer handshake.Answerer, facts session.WorkerFacts) *sessionAuth {
	return &sessionAuth{role: role, answer: answer, facts: facts}
}

// changeLog counts registration changes per worker ID, so a handshake that read the worker's
// facts before a change can tell, once its session is attached, that it missed one.
type changeLog struct {
	mu  sync.Mutex
	seq map[string]uint64
}

func (c *changeLog) bump(workerID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seq == nil {
		c.seq = map[string]uint64{}
	}
	c.seq[workerID]++
}

func (c *changeLog) at(workerID string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq[workerID]
}

// RegistrationChanged implements api.RegistrationWatcher: a peer registered the worker, a
// project it may serve subscribed to a cache or granted its team, or a registration was
// (de)activated. A live session runs a reauth round (gradient-protocol §4.3).
func (s *Server) RegistrationChanged(workerID string) {
	s.changes.bump(workerID)
	if w := s.sessions.get(workerID); w != nil {
		w.triggerReauth()
	}
}

// catchUp starts a reauth round on a session just attached when a registration changed
// after its handshake looked the worker up (the change found no session to tell).
func (s *Server) catchUp(w *worker, seenAt uint64) {
	if s.changes.at(w.id) != seenAt {
		w.triggerReauth()
	}
}

// triggerReauth steps the server's reauth trigger off the caller's goroutine. Triggers that
// arrive while one is on its way are folded into it: the role queues a round behind a round
// in flight, so every trigger is followed by a round that began after it.
func (w *worker) triggerReauth() {
	a := w.auth
	if a == nil || !a.pending.CompareAndSwap(false, true) {
		return
	}
	go func() {
		if err := w.stepAuth(session.ServerReauth{}); err != nil {
			w.log.Info("session ended by a reauth round", "reason", err)
		}
	}()
}

// stepAuth steps the session's role with ev and answers its Needs until it waits for the
// worker again. An error means the session is over (it has been told to end).
func (w *worker) stepAuth(ev session.Event) error {
	a := w.auth
	if a == nil {
		return nil // a session without a role to step: nothing to reauthenticate
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, trigger := ev.(session.ServerReauth); trigger {
		a.pending.Store(false)
	}
	if a.done || w.ctx.Err() != nil {
		return nil // the session is over (or ending): nothing to reauthenticate
	}
	role, out := a.role.Step(ev)
	for {
		a.role = role
		if err := w.applyAuth(out); err != nil {
			return err
		}
		if out.Need == nil {
			return nil
		}
		next, err := a.answer(w.ctx, out.Need)
		if err != nil {
			return w.failAuth(fmt.Errorf("reauth: %w", err))
		}
		if f, ok := next.(session.FactsAnswer); ok {
			a.facts = f.Facts
		}
		role, out = a.role.Step(next)
	}
}

// applyAuth sends what a step says and acts on its status. Called with auth.mu held.
func (w *worker) applyAuth(out session.Output) error {
	a := w.auth
	if out.Status == session.Reauthorized {
		// Grants first: once the worker reads AuthUpdate, the server already acts on it.
		a.awaiting = 0
		w.reauthorized(out.Result, a.facts)
	}
	msgs := out.Send
	if out.Status == session.Ended && out.End.Kind == session.EndRejectSent && len(msgs) > 0 {
		msgs = msgs[:len(msgs)-1] // endAuth sends the Reject with its close
	}
	for _, m := range msgs {
		sm, ok := m.(wire.ServerMessage)
		if !ok {
			continue
		}
		if _, ok := sm.(*wire.AuthChallenge); ok {
			a.rounds++
			a.awaiting = a.rounds
			w.armReauthDeadline(a.rounds)
		}
		if err := w.send(w.ctx, sm); err != nil {
			return w.failAuth(fmt.Errorf("reauth: sending %T: %w", sm, err))
		}
	}
	if out.Status == session.Ended {
		return w.endAuth(out.End)
	}
	return nil
}

// endAuth ends the session the way the role ended it: Reject and close 1008, or (a
// server-dialed session redialing) a normal close. Called with auth.mu held. The cause is
// recorded before the socket closes, so the session's end reports it (the worker's offline
// reason) whatever the read loop or the cache load saw first; the context is cancelled only
// after the Reject went out, since cancelling it closes the socket.
func (w *worker) endAuth(e session.End) error {
	w.auth.done = true
	err := &authEndedError{end: e}
	w.endingBecause(err)
	ctx, cancel := context.WithTimeout(context.Background(), reauthCloseTimeout)
	defer cancel()
	switch e.Kind {
	case session.EndRejectSent:
		w.srv.counters.ReauthEnded.Add(1)
		_ = w.conn.Reject(ctx, e.Code, e.Reason)
	case session.EndViolation: // the role's Error 400 is queued: Close sends it first
		w.srv.counters.ProtocolViolations.Add(1)
		w.srv.hostile.Warn("protocol violation: answered Error 400 and closed the session",
			"worker", w.id, "remote", w.remote, "reason", e.Reason)
		_ = w.conn.Close(ctx)
	default:
		_ = w.conn.Close(ctx)
	}
	w.cancelCause(err)
	return err
}

// failAuth ends the session after a failure outside the role (a store error, a dead socket,
// an unanswered challenge). Called with auth.mu held.
func (w *worker) failAuth(err error) error {
	w.auth.done = true
	ctx, cancel := context.WithTimeout(context.Background(), reauthCloseTimeout)
	defer cancel()
	_ = w.conn.Close(ctx)
	w.cancelCause(err)
	return err
}

// armReauthDeadline ends the session if round's challenge is still unanswered after
// reauthAnswerTimeout.
func (w *worker) armReauthDeadline(round uint64) {
	time.AfterFunc(reauthAnswerTimeout, func() {
		a := w.auth
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.done || a.awaiting != round || w.ctx.Err() != nil {
			return
		}
		w.log.Warn("the worker left a reauth challenge unanswered: ending the session")
		w.failAuth(errReauthUnanswered)
	})
}

// reauthorized grows the session's grants by a round's result (gradient-protocol §4.3: the
// authorized set only grows), reloads the caches the projects subscribe to, and offers the
// queue to the session's idle slots, so jobs of a project that joined are dispatched to it.
func (w *worker) reauthorized(res session.Result, facts session.WorkerFacts) {
	add := grantsOf(res, facts)
	w.mu.Lock()
	w.grants.projects = sortedUnion(w.grants.projects, add.projects)
	w.grants.directCaches = sortedUnion(w.grants.directCaches, add.directCaches)
	projects := slices.Clone(w.grants.projects)
	w.mu.Unlock()
	if err := w.loadCaches(w.ctx); err != nil && w.ctx.Err() == nil {
		w.log.Warn("reading the caches after a reauth", "err", err)
	}
	w.srv.counters.Reauths.Add(1)
	w.log.Info("worker reauthorized", "projects", projects, "failed", len(res.Failed))
	w.srv.Kick()
}

// sortedUnion is the sorted set of a and b, in a fresh slice.
func sortedUnion(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}
