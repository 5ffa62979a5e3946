package workertest

import (
	"context"
	"fmt"
	"sync"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// Session is one running worker session on the fake server.
type Session struct {
	Result session.Result

	srv  *Server
	conn *wsconn.ServerConn
	ctx  context.Context
	stop context.CancelFunc
	done chan struct{}

	mu         sync.Mutex
	msgs       []wire.ClientMessage
	notify     chan struct{}     // closed and replaced on every new message
	handed     map[string]string // job → assignment handed out by this session
	fromQueue  map[string]queuedJob
	logs       map[string][]byte
	uploads    map[uint64]*upload
	violations []string
}

func newSession(s *Server, c *wsconn.ServerConn, res session.Result) *Session {
	ctx, stop := context.WithCancel(context.Background())
	return &Session{Result: res, srv: s, conn: c, ctx: ctx, stop: stop, done: make(chan struct{}),
		notify: make(chan struct{}), handed: map[string]string{}, fromQueue: map[string]queuedJob{},
		logs: map[string][]byte{}, uploads: map[uint64]*upload{}}
}

// loop reads and handles messages until the connection ends. Frames are never released:
// recorded messages keep their byte slices.
func (ss *Session) loop(role session.Authority) {
	defer close(ss.done)
	defer ss.stop()
	for {
		m, _, err := ss.conn.Read(ss.ctx)
		if err != nil {
			return
		}
		ss.record(m)
		next, out := role.Step(session.Received{Msg: m})
		for out.Need != nil {
			ev, _ := ss.srv.answer(ss.ctx, out.Need)
			next, out = next.Step(ev)
		}
		role = next
		for _, sm := range out.Send {
			_ = ss.conn.Send(ss.ctx, sm.(wire.ServerMessage))
		}
		if out.Status == session.Ended {
			_ = ss.conn.Close(ss.ctx)
			return
		}
		if out.Status == session.Pass {
			ss.handle(m)
		}
	}
}

func (ss *Session) send(m wire.ServerMessage) { _ = ss.conn.Send(ss.ctx, m) }

func (ss *Session) record(m wire.ClientMessage) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.msgs = append(ss.msgs, m)
	close(ss.notify)
	ss.notify = make(chan struct{})
}

func (ss *Session) violate(format string, args ...any) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.violations = append(ss.violations, fmt.Sprintf(format, args...))
}

func (ss *Session) handle(m wire.ClientMessage) {
	switch m := m.(type) {
	case *wire.RequestJobList:
		ss.send(&wire.JobListChunk{IsFinal: true})
	case *wire.RequestJob:
		if q, ok := ss.srv.takeJob(m.Kind); ok {
			ss.mu.Lock()
			ss.fromQueue[q.id] = q
			ss.mu.Unlock()
			ss.assign(q.id, q.job)
		}
	case *wire.AssignJobResponse:
		ss.responded(m)
	case *wire.CacheQuery:
		ss.cacheQuery(m)
	case *wire.QueryKnownDerivations:
		var known []string
		for _, d := range m.DrvPaths {
			if ss.srv.isKnown(d) {
				known = append(known, d)
			}
		}
		ss.send(&wire.KnownDerivations{QueryID: m.QueryID, Known: known})
	case *wire.UploadRequest, *wire.UploadChunk, *wire.UploadFinished, *wire.UploadCancel:
		ss.uploadMessage(m)
	case *wire.NarRequest:
		go ss.serveNars(m.JobID, m.Paths)
	case *wire.NarRequestResume:
		go ss.serveNarFrom(m.JobID, m.StorePath, m.ReceivedBytes)
	case *wire.JobUpdate, *wire.JobCompleted, *wire.JobFailed, *wire.LogChunk:
		ss.report(m)
	}
}

// report checks a job report against the assignments this session handed out.
func (ss *Session) report(m wire.ClientMessage) {
	switch m := m.(type) {
	case *wire.JobUpdate:
		ss.checkReport(m.JobID, m.AssignmentID, m)
	case *wire.JobCompleted:
		ss.checkReport(m.JobID, m.AssignmentID, m)
	case *wire.JobFailed:
		ss.checkReport(m.JobID, m.AssignmentID, m)
	case *wire.LogChunk:
		ss.mu.Lock()
		if _, ok := ss.handed[m.JobID]; !ok {
			ss.violations = append(ss.violations, "LogChunk for a job not handed out: "+m.JobID)
		}
		ss.logs[m.JobID] = append(ss.logs[m.JobID], m.Data...)
		ss.mu.Unlock()
	}
}

func (ss *Session) assign(jobID string, job wire.Job) string {
	id := newAssignmentID()
	ss.mu.Lock()
	ss.handed[jobID] = id
	ss.mu.Unlock()
	ss.send(&wire.AssignJob{JobID: jobID, AssignmentID: id, Job: job})
	return id
}

func (ss *Session) responded(m *wire.AssignJobResponse) {
	if m.Accepted {
		return
	}
	ss.mu.Lock()
	q, ok := ss.fromQueue[m.JobID]
	delete(ss.fromQueue, m.JobID)
	ss.mu.Unlock()
	if ok {
		ss.srv.requeue(q)
	}
}

func (ss *Session) checkReport(jobID, assignmentID string, m wire.ClientMessage) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.handed[jobID] != assignmentID {
		ss.violations = append(ss.violations, fmt.Sprintf("%T for (%s, %s), not handed out by this session", m, jobID, assignmentID))
	}
}

// Assign sends an AssignJob for job and returns the assignment ID handed out.
func (ss *Session) Assign(jobID string, job wire.Job) string { return ss.assign(jobID, job) }

// Abort sends AbortJob.
func (ss *Session) Abort(jobID, reason string) { ss.send(&wire.AbortJob{JobID: jobID, Reason: reason}) }

// Drain sends Draining and closes the session.
func (ss *Session) Drain() {
	ss.send(&wire.ServerDraining{})
	_ = ss.conn.Close(ss.ctx)
}

// Drop closes the TCP connection at once, as a crashed server or a broken network would.
func (ss *Session) Drop() { ss.conn.Abort() }

// Done is closed when the session has ended.
func (ss *Session) Done() <-chan struct{} { return ss.done }

// Messages returns every message received so far.
func (ss *Session) Messages() []wire.ClientMessage {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]wire.ClientMessage(nil), ss.msgs...)
}

// Violations lists protocol rules the worker broke, as the fake saw them.
func (ss *Session) Violations() []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]string(nil), ss.violations...)
}

// Log is the build log received for a job.
func (ss *Session) Log(jobID string) string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return string(ss.logs[jobID])
}

// Wait returns the first recorded message that match accepts, waiting for it to arrive.
func (ss *Session) Wait(ctx context.Context, match func(wire.ClientMessage) bool) (wire.ClientMessage, error) {
	seen := 0
	for {
		ss.mu.Lock()
		msgs, notify := ss.msgs[seen:], ss.notify
		seen = len(ss.msgs)
		ss.mu.Unlock()
		for _, m := range msgs {
			if match(m) {
				return m, nil
			}
		}
		select {
		case <-notify:
		case <-ss.done:
			return nil, errSessionOver
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// WaitJobEnd waits for the JobCompleted or JobFailed of a job.
func (ss *Session) WaitJobEnd(ctx context.Context, jobID string) (wire.ClientMessage, error) {
	return ss.Wait(ctx, func(m wire.ClientMessage) bool {
		switch m := m.(type) {
		case *wire.JobCompleted:
			return m.JobID == jobID
		case *wire.JobFailed:
			return m.JobID == jobID
		}
		return false
	})
}

// SendCredential sends a Credential, which belongs to the next AssignJob.
func (ss *Session) SendCredential(data []byte) {
	ss.send(&wire.Credential{Kind: wire.CredentialKindSSHKey, Data: data})
}
