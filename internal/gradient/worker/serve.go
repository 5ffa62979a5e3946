package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// SessionEnd says how a session ended.
type SessionEnd struct {
	Reason  string
	Drained bool // the server sent Draining
	Stopped bool // the worker stopped (its context ended)
}

// Why a job's context was cancelled; the job's report depends on it.
var (
	errAborted  = errors.New("aborted by the server")
	errCanceled = errors.New("worker is stopping")
	errLost     = errors.New("session lost")
)

// closeTimeout bounds the close handshake and the drain of queued frames at a session's end.
const closeTimeout = 3 * time.Second

// lostJobWait bounds the wait for aborted jobs when a session ends: their nix processes
// are being stopped (SIGINT, then SIGKILL after the kill grace).
const lostJobWait = 30 * time.Second

type inbound struct {
	msg     wire.ServerMessage
	release func()
	err     error
}

// Serve runs the job loop over an established session (gradient-server §6): res is the
// handshake's result and role the running role. It returns when the session ends: the
// connection was lost or closed (running jobs are aborted, unreported), the server sent
// Draining or a Reject, or stopCtx ended — then the worker sends Draining, aborts its jobs
// reporting each as Canceled, waits up to StopGrace for those reports, and closes
// (gradient-server §6.6).
func (w *Worker) Serve(stopCtx context.Context, conn *wsconn.WorkerConn, role session.Stepper, res session.Result) SessionEnd {
	s := w.newSession(conn, role, res)
	defer s.cancel()
	msgs := make(chan inbound)
	go s.readLoop(msgs)
	select { // a change seen while no session was live is already in this session's tokens
	case <-w.peersChanged:
	default:
	}
	select { // likewise a probe's: this session's offer was read after it
	case <-w.health.changed:
	default:
	}
	s.start()
	tick := time.NewTicker(w.cfg.MetricsInterval)
	defer tick.Stop()
	for {
		select {
		case in := <-msgs:
			if in.err != nil {
				return s.end(SessionEnd{Reason: "connection lost: " + in.err.Error()})
			}
			end, over := s.receive(in.msg)
			in.release()
			if over {
				return s.end(end)
			}
		case tokens := <-w.peersChanged:
			if end, over := s.step(session.PeersChanged{Tokens: tokens}); over {
				return s.end(end)
			}
		case <-tick.C:
			s.heartbeat()
		case <-w.health.changed:
			return s.drain("nix can no longer do what this session offered, or can do more: reconnecting")
		case j := <-s.finished:
			s.jobFinished(j)
		case <-stopCtx.Done():
			return s.stop()
		}
	}
}

// sess is one live session's state, owned by Serve's goroutine except where noted.
type sess struct {
	w      *Worker
	conn   *wsconn.WorkerConn
	role   session.Stepper // session.Peer when the worker dialed, session.Dialed when the server did
	caps   wire.GradientCapabilities
	log    *slog.Logger
	ctx    context.Context // the session's lifetime; job reports are sent with it
	cancel context.CancelFunc

	jobs       map[string]*job
	running    [2]int // by wire.JobKind
	limits     [2]int
	draining   bool
	credential []byte
	finished   chan *job     // job goroutines report their end here
	over       chan struct{} // closed when the session is closed: nobody reads finished
	routes     *router       // shared with job goroutines
	queries    chan struct{}
}

func (w *Worker) newSession(conn *wsconn.WorkerConn, role session.Stepper, res session.Result) *sess {
	ctx, cancel := context.WithCancel(context.Background())
	return &sess{
		w: w, conn: conn, role: role, caps: res.Capabilities, log: w.cfg.Logger,
		ctx: ctx, cancel: cancel,
		jobs:     map[string]*job{},
		limits:   [2]int{wire.JobKindFlake: 1, wire.JobKindBuild: w.cfg.MaxConcurrentBuilds},
		finished: make(chan *job),
		over:     make(chan struct{}),
		routes:   newRouter(),
		queries:  make(chan struct{}, maxQueriesInFlight),
	}
}

func (s *sess) readLoop(out chan<- inbound) {
	for {
		m, release, err := s.conn.Read(s.ctx)
		select {
		case out <- inbound{msg: m, release: release, err: err}:
		case <-s.ctx.Done():
			release()
			return
		}
		if err != nil {
			return
		}
	}
}

// send queues one message; job goroutines call it too (the writer is shared).
func (s *sess) send(m wire.ClientMessage) error {
	if err := s.conn.Send(s.ctx, m); err != nil {
		return fmt.Errorf("sending %T: %w", m, err)
	}
	return nil
}

// start sends what follows the handshake (gradient-protocol §4.1, gradient-server §6.1).
func (s *sess) start() {
	if s.caps.Build {
		caps, err := s.w.capabilities(s.ctx)
		if err != nil {
			s.log.Warn("worker: cannot read the nix configuration", "err", err)
		}
		_ = s.send(caps)
	}
	_ = s.send(&wire.RequestJobList{})
	if s.caps.Fetch || s.caps.Eval {
		_ = s.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	}
	if s.caps.Build {
		for range s.free(wire.JobKindBuild) {
			_ = s.send(&wire.RequestJob{Kind: wire.JobKindBuild})
		}
	}
}

// heartbeat is the 10 s WorkerMetrics plus a RequestJob per kind with a free slot.
func (s *sess) heartbeat() {
	_ = s.send(s.w.metrics())
	if s.draining {
		return
	}
	for _, k := range s.kinds() {
		if s.free(k) > 0 {
			_ = s.send(&wire.RequestJob{Kind: k})
		}
	}
}

// kinds are the job kinds this session negotiated.
func (s *sess) kinds() []wire.JobKind {
	var ks []wire.JobKind
	if s.caps.Fetch || s.caps.Eval {
		ks = append(ks, wire.JobKindFlake)
	}
	if s.caps.Build {
		ks = append(ks, wire.JobKindBuild)
	}
	return ks
}

func (s *sess) free(k wire.JobKind) int { return s.limits[k] - s.running[k] }

// receive steps the role with a message and handles what the role passes on.
func (s *sess) receive(m wire.ServerMessage) (SessionEnd, bool) {
	role, out := s.role.Step(session.Received{Msg: m})
	s.role = role
	if end, over := s.apply(out); over {
		return end, true
	}
	if out.Status == session.Pass {
		s.dispatch(m)
	}
	return SessionEnd{}, false
}

// step steps the role with a trigger (a peers file change).
func (s *sess) step(ev session.Event) (SessionEnd, bool) {
	role, out := s.role.Step(ev)
	s.role = role
	return s.apply(out)
}

// apply sends what a step says to send and reports whether it ended the session.
func (s *sess) apply(out session.Output) (SessionEnd, bool) {
	for _, m := range out.Send {
		if cm, ok := m.(wire.ClientMessage); ok {
			_ = s.send(cm)
		}
	}
	switch {
	case out.Status == session.Ended:
		return SessionEnd{Reason: out.End.String(), Drained: out.End.Kind == session.EndDrained}, true
	case out.Need != nil:
		return SessionEnd{Reason: fmt.Sprintf("role asked %T, which the job loop cannot answer", out.Need)}, true
	case out.Status == session.Reauthorized:
		s.log.Info("worker: reauthorized", "authorized", out.Result.Authorized, "failed", len(out.Result.Failed))
	}
	return SessionEnd{}, false
}

func (s *sess) dispatch(m wire.ServerMessage) {
	switch m := m.(type) {
	case *wire.AssignJob:
		s.assign(m)
	case *wire.AbortJob:
		if j, ok := s.jobs[m.JobID]; ok {
			s.log.Info("worker: job aborted by the server", "job", m.JobID, "reason", m.Reason)
			j.cancel(fmt.Errorf("%w: %s", errAborted, m.Reason))
		}
	case *wire.Credential:
		clear(s.credential)
		s.credential = bytes.Clone(m.Data)
	case *wire.CacheStatus:
		s.routes.deliverQuery(m.QueryID, m)
	case *wire.CacheError:
		s.routes.deliverQuery(m.QueryID, m)
	case *wire.KnownDerivations:
		s.routes.deliverQuery(m.QueryID, m)
	case *wire.UploadGrant:
		s.routes.deliverUpload(m.RequestID, m)
	case *wire.UploadCommitted:
		s.routes.deliverUpload(m.RequestID, m)
	case *wire.NarStreamHeader, *wire.NarPush, *wire.NarUnavailable, *wire.NarAbort:
		s.routes.deliverNar(m)
	case *wire.JobListChunk:
		if m.IsFinal { // no scoring in v1 (gradient-server §10.13): an empty final page of scores
			_ = s.send(&wire.RequestJobChunk{IsFinal: true})
		}
	case *wire.ServerError:
		s.log.Warn("worker: server reported an error", "code", m.Code, "message", m.Message)
	default:
		s.log.Debug("worker: ignoring message", "type", fmt.Sprintf("%T", m))
	}
}

// end finishes a session that is over: every running job is aborted without a report (the
// session that could carry it is gone, gradient-server §6.5), then the socket is closed.
func (s *sess) end(e SessionEnd) SessionEnd {
	s.abortAll(errLost)
	s.waitJobs(lostJobWait)
	s.close()
	return e
}

// stop is the worker's SIGTERM (gradient-server §6.6): Draining, every job cancelled and
// reported as Canceled, at most StopGrace for those reports, then close.
func (s *sess) stop() SessionEnd {
	end := s.drain("worker stopping")
	end.Stopped = true
	return end
}

// drain ends the session the way a stop does — Draining, every job cancelled and reported
// Canceled (the server re-queues them without spending an attempt), at most StopGrace for
// those reports, then close — without stopping the worker.
func (s *sess) drain(reason string) SessionEnd {
	s.log.Info("worker: ending the session", "reason", reason)
	s.draining = true
	_ = s.send(&wire.ClientDraining{})
	s.abortAll(errCanceled)
	s.waitJobs(s.w.cfg.StopGrace)
	s.abortAll(errLost) // jobs that did not report in time are left to the server's recovery
	s.close()
	return SessionEnd{Reason: reason}
}

func (s *sess) close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_ = s.conn.Close(ctx)
	s.cancel()
	close(s.over)
}

func (s *sess) abortAll(cause error) {
	for _, j := range s.jobs {
		j.cancel(cause)
	}
}

// waitJobs collects finished jobs until none runs or the time is up.
func (s *sess) waitJobs(limit time.Duration) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for len(s.jobs) > 0 {
		select {
		case j := <-s.finished:
			s.jobFinished(j)
		case <-timer.C:
			s.log.Warn("worker: jobs still running at the end of the session", "jobs", len(s.jobs))
			return
		}
	}
}
