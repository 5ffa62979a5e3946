package server

import (
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// errProtocol ends a session whose worker sent something a running session never carries
// and the role does not judge (an unknown job kind): run answers it Error 400 malformed
// message before the close.
var errProtocol = errors.New("protocol violation")

// route handles one inbound message on the read loop. Reports go to the ordered queue; cache
// traffic goes to cacheserve (an UploadChunk's bytes die with the frame, so it is written
// before route returns); the rest is answered here.
func (w *worker) route(m wire.ClientMessage) error {
	switch m := m.(type) {
	case *wire.RequestJob:
		return w.requestJob(m.Kind)
	case *wire.AssignJobResponse, *wire.JobUpdate, *wire.JobCompleted, *wire.JobFailed,
		*wire.EvalMessage, *wire.QueryKnownDerivations, *wire.WorkerCapabilities:
		return w.enqueue(m)
	case *wire.LogChunk:
		data := append([]byte(nil), m.Data...) // the frame is released after route returns
		return w.enqueue(&wire.LogChunk{JobID: m.JobID, TaskIndex: m.TaskIndex, Data: data})
	case *wire.RequestJobList:
		// Scoring is out of scope (gradient-server §10.13): one empty final page.
		return w.send(w.ctx, &wire.JobListChunk{IsFinal: true})
	case *wire.RequestJobChunk, *wire.WorkerMetrics, *wire.BuildProgress, *wire.EvalProgress:
		return nil // last-seen was stamped; nothing else to do in v1
	case *wire.ClientDraining:
		w.mu.Lock()
		w.draining, w.idle = true, [2]int{}
		w.mu.Unlock()
		w.log.Info("worker is draining: assigning it nothing more")
		return nil
	case *wire.ReauthRequest, *wire.AuthResponse, *wire.InitConnection, *wire.ClientReject:
		// Reauth (gradient-protocol §4.3, reauth.go), and the role's end of the session: an
		// InitConnection is answered Error 400 and closed (gradient-protocol §1.4), a Reject
		// closed.
		return w.stepAuth(session.Received{Msg: m})
	}
	handled, err := w.cache.Handle(w.ctx, m)
	if err != nil || handled {
		return err
	}
	w.srv.counters.MessagesIgnored.Add(1)
	w.log.Debug("message not served on a worker session", "type", fmt.Sprintf("%T", m))
	return nil
}

// report is one queued message for the applier.
// report is one queued report, with whether the worker had sent Draining when it arrived: the
// applier runs behind the read loop, which acts on Draining at once.
type report struct {
	msg      wire.ClientMessage
	draining bool
}

// enqueue hands a report to the applier; a full queue holds the read loop back (the
// worker's frames wait in the socket, in order).
func (w *worker) enqueue(m wire.ClientMessage) error {
	w.mu.Lock()
	r := report{msg: m, draining: w.draining}
	w.mu.Unlock()
	select {
	case w.reports <- r:
		return nil
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// assignmentOf returns the job an (job ID, assignment ID) pair names if this session handed
// it out; every other report is dropped (gradient-server §6.1).
func (w *worker) assignmentOf(jobID, assignmentID string) (store.JobRef, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	job, ok := w.handed[assignmentID]
	if !ok || job.String() != jobID {
		return store.JobRef{}, false
	}
	return job, true
}

// openAssignment is the open assignment of a job on this session (LogChunk and EvalMessage
// name only the job).
func (w *worker) openAssignment(jobID string) (string, store.JobRef, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id, ok := w.byJob[jobID]
	return id, w.handed[id], ok
}

// forget closes an assignment on this session once its final report was applied.
func (w *worker) forget(assignmentID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if job, ok := w.handed[assignmentID]; ok {
		delete(w.handed, assignmentID)
		delete(w.subst, assignmentID)
		if w.byJob[job.String()] == assignmentID {
			delete(w.byJob, job.String())
		}
	}
}
