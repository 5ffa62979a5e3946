package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// dialPollEvery is how often the dial targets are read again: new registrations with a URL
// are dialed within this, and a live server-dialed session is checked against its
// registrations (gradient-protocol §4.3: a new one closes the session so the next dial
// carries its token).
const dialPollEvery = 2 * time.Second

// ErrNoDialKey: a worker has a stored dial token but the server has no key to open it.
var ErrNoDialKey = errors.New("no secret key to open the stored dial token")

// dialOutcome is how one dial of a worker ended, for the re-dial pacing.
type dialOutcome uint8

const (
	dialFailed dialOutcome = iota // no session: connect, agreement or handshake failed
	dialServed                    // a session ran and ended
	dialRedial                    // a reauth found a new registration: dial again now
)

// dialResult is what a dial goroutine reports to the loop.
type dialResult struct {
	workerID string
	outcome  dialOutcome
	reason   string // why the dial failed, for the log
}

// dialState is one dial target's pacing, owned by the dialer loop.
type dialState struct {
	backoff     dialBackoff
	next        time.Time
	inFlight    bool
	lastReason  string
	peers       string // the target's peers when its session was dialed or last checked
	warnedPlain bool   // the ws:// warning was logged for this target
}

// dialer dials every registration and team worker with a URL (gradient-protocol §4.1
// as_dialer) and keeps one session per worker: never while another session of the worker ID
// is live, again with jittered exponential backoff after a failure, and soon after a session
// ends.
type dialer struct {
	s       *Server
	jitter  func() float64
	states  map[string]*dialState
	done    chan dialResult
	stopped chan struct{}
}

// runDialer runs the dialer until ctx or the server ends. Sessions it started keep running;
// Shutdown ends them like any other.
func (s *Server) runDialer(ctx context.Context) {
	d := &dialer{s: s, jitter: rand.Float64, states: map[string]*dialState{},
		done: make(chan dialResult), stopped: make(chan struct{})}
	defer close(d.stopped)
	poll := time.NewTicker(dialPollEvery)
	defer poll.Stop()
	d.pass(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.ctx.Done():
			return
		case r := <-d.done:
			if d.finished(r) {
				d.pass(ctx)
			}
		case <-poll.C:
			d.pass(ctx)
		}
	}
}

// pass reads the dial targets and starts a dial for each that is due; a target whose session
// runs is checked against its registrations instead.
func (d *dialer) pass(ctx context.Context) {
	targets, err := d.s.cfg.Store.DialTargets(ctx)
	if err != nil {
		d.s.log.Warn("reading the workers to dial", "err", err)
		return
	}
	now, seen := d.s.now(), map[string]bool{}
	for _, t := range targets {
		if seen[t.WorkerID] {
			continue // one URL per worker ID: the first in URL order
		}
		seen[t.WorkerID] = true
		st := d.state(t.WorkerID)
		switch {
		case st.inFlight:
			d.checkLive(t.WorkerID, st, targetPeers(t))
		case d.s.stopping.Load() || d.s.sessions.held(t.WorkerID) || now.Before(st.next):
		default:
			d.start(t, st)
		}
	}
	for id, st := range d.states {
		if !seen[id] && st.inFlight {
			d.checkLive(id, st, "") // no longer a target: a reauth finds it deactivated
		} else if !seen[id] {
			delete(d.states, id)
		}
	}
}

func (d *dialer) state(workerID string) *dialState {
	st := d.states[workerID]
	if st == nil {
		st = &dialState{}
		d.states[workerID] = st
	}
	return st
}

// start dials t on its own goroutine; it reports back when the dial failed or its session
// ended.
func (d *dialer) start(t store.DialTarget, st *dialState) {
	if !st.warnedPlain && isPlainWS(t.URL) {
		st.warnedPlain = true
		d.s.log.Warn("dialing a worker over ws://: its tokens cross the network unencrypted (use wss:// outside local setups)",
			"worker", t.WorkerID, "url", t.URL)
	}
	st.inFlight, st.peers = true, targetPeers(t)
	go func() {
		outcome, reason := d.s.dialOnce(t)
		select {
		case d.done <- dialResult{workerID: t.WorkerID, outcome: outcome, reason: reason}:
		case <-d.stopped:
		}
	}()
}

// finished schedules the next dial of a worker; true asks for a pass at once (a redial).
func (d *dialer) finished(r dialResult) bool {
	st := d.state(r.workerID)
	st.inFlight = false
	now := d.s.now()
	switch r.outcome {
	case dialRedial:
		st.backoff, st.next, st.lastReason = dialBackoff{}, now, ""
		return true
	case dialServed:
		st.next, st.lastReason = now.Add(st.backoff.served(d.jitter())), ""
		return false
	}
	wait := st.backoff.failed(d.jitter())
	st.next = now.Add(wait)
	level := slog.LevelDebug
	if r.reason != st.lastReason {
		level, st.lastReason = slog.LevelWarn, r.reason // log a failure when it changes, not every minute
	}
	d.s.log.Log(context.Background(), level, "dialing a worker failed", "worker", r.workerID, "reason", r.reason, "retry_in", wait)
	return false
}

// checkLive asks a live server-dialed session for a reauth (gradient-protocol §4.3) when its
// worker's registrations with a URL changed since it was dialed or last checked: a new one
// closes the session so the next dial carries its token, none left ends it 403. The API
// already triggers a reauth for its own changes (RegistrationChanged); this also catches
// changes made behind its back, such as another server sharing the database.
func (d *dialer) checkLive(workerID string, st *dialState, peers string) {
	if peers == st.peers {
		return
	}
	w := d.s.sessions.get(workerID)
	if w == nil {
		return // still in its handshake (catchUp covers the API's changes): look again next pass
	}
	st.peers = peers
	w.triggerReauth()
}

// targetPeers is a dial target's peer set as a comparable string.
func targetPeers(t store.DialTarget) string {
	peers := make([]string, len(t.Tokens))
	for i, tok := range t.Tokens {
		peers[i] = tok.PeerID
	}
	slices.Sort(peers)
	return strings.Join(slices.Compact(peers), "\x00")
}

func isPlainWS(u string) bool {
	parsed, err := url.Parse(u)
	return err == nil && parsed.Scheme == "ws"
}

// dialOnce dials one worker, runs the dialer handshake and, when it is accepted, serves the
// session like an inbound one until it ends. A failure is kept as the worker's offline reason
// (gradient-protocol §1.2, gradient-protocol §4.4: a dialed worker is always registered) and
// returned for the log.
func (s *Server) dialOnce(t store.DialTarget) (dialOutcome, string) {
	tokens, err := s.openDialTokens(t)
	if err != nil {
		return s.dialFailed(t.WorkerID, err.Error())
	}
	if !s.takeConnSlot() {
		return s.dialFailed(t.WorkerID, "too many connections")
	}
	defer s.releaseConnSlot()
	conn, err := wsconn.DialWorker(s.ctx, t.URL, wsconn.DialOptions{Options: wsconn.Options{Logger: s.log}})
	if err != nil {
		return s.dialFailed(t.WorkerID, "dial failed: "+err.Error())
	}
	defer conn.Abort() // whatever way the session ends, its socket goes with it
	s.wg.Add(1)
	defer s.wg.Done()
	a := &answerer{s: s}
	role, out := session.NewDialer(session.DialerConfig{WorkerID: t.WorkerID, Tokens: tokens, Federate: s.cfg.Federate})
	role, res, err := handshake.Run(s.ctx, conn, role, out, a.answer)
	if err != nil {
		return s.dialHandshakeFailed(a, t.WorkerID, err)
	}
	wk := newWorker(s, conn, res, a.identity, t.URL)
	wk.auth = newSessionAuth(session.Erase(role), a.answer, a.identity.Facts)
	s.sessions.attach(wk)
	s.catchUp(wk, a.changesSeen)
	wk.run()
	var ended *authEndedError
	if errors.As(context.Cause(wk.ctx), &ended) && ended.end.Kind == session.EndRedial {
		return dialRedial, ""
	}
	return dialServed, ""
}

// openDialTokens opens the sealed plaintext tokens of a target. They live only in the
// Authenticate message and are never logged.
func (s *Server) openDialTokens(t store.DialTarget) ([]wire.PeerToken, error) {
	if s.cfg.Secrets == nil {
		return nil, ErrNoDialKey
	}
	out := make([]wire.PeerToken, 0, len(t.Tokens))
	for _, tok := range t.Tokens {
		plain, err := s.cfg.Secrets.Open(aeadbox.PurposeDialToken, tok.TokenEnc)
		if err != nil {
			return nil, fmt.Errorf("the stored dial token for peer %s does not open (was the data directory's key replaced?): %w", tok.PeerID, err)
		}
		out = append(out, wire.PeerToken{PeerID: tok.PeerID, Token: string(plain)})
		clear(plain)
	}
	return out, nil
}

func (s *Server) dialFailed(workerID, reason string) (dialOutcome, string) {
	s.recordOffline(workerID, reason)
	return dialFailed, reason
}

// dialHandshakeFailed releases a claimed slot and keeps why the handshake failed: the
// worker's own Reject (a wrong token is "rejected by peer: 401 …"), this server's refusal,
// or a failed version agreement or read.
func (s *Server) dialHandshakeFailed(a *answerer, workerID string, err error) (dialOutcome, string) {
	if a.claimed != "" {
		s.sessions.release(a.claimed, nil)
	}
	var ended *handshake.EndedError
	if !errors.As(err, &ended) {
		return s.dialFailed(workerID, "handshake failed: "+err.Error())
	}
	if ended.End.Kind == session.EndRejectSent {
		s.counters.refused(ended.End.Code)
	}
	if _, reason, keep := session.OfflineReason(ended.End); keep {
		return s.dialFailed(workerID, reason)
	}
	return dialFailed, ended.End.String()
}

// held reports whether a session of id is live or finishing its handshake.
func (r *registry) held(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.live[id]
	return ok
}
