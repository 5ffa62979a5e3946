package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/loghub"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// applyReports applies the session's reports in arrival order until the queue closes.
func (w *worker) applyReports() {
	for r := range w.reports {
		if err := w.apply(w.srv.ctx, r); err != nil {
			w.srv.counters.ReportsFailed.Add(1)
			w.log.Warn("applying a report", "type", fmt.Sprintf("%T", r.msg), "err", err)
		}
	}
}

func (w *worker) apply(ctx context.Context, r report) error {
	switch m := r.msg.(type) {
	case *wire.JobUpdate:
		return w.applyUpdate(ctx, m)
	case *wire.JobCompleted:
		return w.applyCompleted(ctx, m)
	case *wire.JobFailed:
		return w.applyFailed(ctx, m, r.draining)
	case *wire.AssignJobResponse:
		return w.applyResponse(ctx, m)
	case *wire.LogChunk:
		return w.applyLog(ctx, m)
	case *wire.EvalMessage:
		return w.applyEvalMessage(ctx, m)
	case *wire.QueryKnownDerivations:
		return w.answerKnown(ctx, m)
	case *wire.WorkerCapabilities:
		return w.applyCapabilities(ctx, m)
	}
	return fmt.Errorf("no applier for %T", r.msg)
}

// stale counts and drops a report for an assignment this session did not hand out.
func (w *worker) stale(jobID, assignmentID string) error {
	w.srv.counters.ReportsStale.Add(1)
	w.log.Debug("dropped a report for an assignment this session did not hand out", "job", jobID, "assignment", assignmentID)
	return nil
}

func (w *worker) applyUpdate(ctx context.Context, m *wire.JobUpdate) error {
	job, ok := w.assignmentOf(m.JobID, m.AssignmentID)
	if !ok {
		return w.stale(m.JobID, m.AssignmentID)
	}
	if err := checkUpdate(job, m.Update); err != nil {
		return w.rejectReport(ctx, job, m.AssignmentID, err, true)
	}
	err := w.storeUpdate(ctx, m)
	if errors.Is(err, store.ErrInvalid) { // the store's own rules
		return w.rejectReport(ctx, job, m.AssignmentID, err, true)
	}
	return ignoreStale(err, job)
}

// storeUpdate applies a validated JobUpdate.
func (w *worker) storeUpdate(ctx context.Context, m *wire.JobUpdate) error {
	st := w.srv.cfg.Store
	var err error
	switch u := m.Update.(type) {
	case *wire.JobUpdateFetching:
		err = st.SetEvaluationPhase(ctx, m.AssignmentID, store.EvalFetching)
	case *wire.JobUpdateFetchResult:
		if src, ok := u.FlakeSource.Get(); ok {
			err = st.RecordFlakeSource(ctx, m.AssignmentID, src)
		}
	case *wire.JobUpdateEvaluatingFlake:
		err = st.SetEvaluationPhase(ctx, m.AssignmentID, store.EvalEvaluatingFlake)
	case *wire.JobUpdateEvaluatingDerivations:
		err = st.SetEvaluationPhase(ctx, m.AssignmentID, store.EvalEvaluatingDerivation)
	case *wire.JobUpdateEvalResult:
		var eff store.Effects
		eff, err = st.AddEvalResult(ctx, evalBatch(m.AssignmentID, u))
		w.srv.Apply(ctx, eff)
	case *wire.JobUpdateBuilding:
		var at store.Attempt
		if at, err = st.StartBuildAttempt(ctx, m.AssignmentID); err == nil {
			w.srv.logs.Changed(at.BuildID) // followers waiting for an attempt start on it
		}
	case *wire.JobUpdateBuildOutput:
		w.mu.Lock()
		w.subst[m.AssignmentID] = u.Substituted
		w.mu.Unlock()
	}
	return err
}

func (w *worker) applyCompleted(ctx context.Context, m *wire.JobCompleted) error {
	job, ok := w.assignmentOf(m.JobID, m.AssignmentID)
	if !ok {
		return w.stale(m.JobID, m.AssignmentID)
	}
	defer w.forget(m.AssignmentID)
	w.srv.quarantine.jobEnded(w.id)
	st := w.srv.cfg.Store
	var eff store.Effects
	var err error
	if job.Kind == store.JobBuild {
		w.mu.Lock()
		substituted := w.subst[m.AssignmentID]
		w.mu.Unlock()
		eff, err = st.CompleteBuild(ctx, m.AssignmentID, substituted)
	} else {
		eff, err = st.CompleteEvaluationJob(ctx, m.AssignmentID)
	}
	w.srv.counters.JobsCompleted.Add(1)
	w.srv.Apply(ctx, eff)
	return ignoreStale(err, job)
}

// applyFailed applies a JobFailed; draining is whether the worker had sent Draining before it.
func (w *worker) applyFailed(ctx context.Context, m *wire.JobFailed, draining bool) error {
	job, ok := w.assignmentOf(m.JobID, m.AssignmentID)
	if !ok {
		return w.stale(m.JobID, m.AssignmentID)
	}
	if err := checkFailed(m); err != nil {
		return w.rejectReport(ctx, job, m.AssignmentID, err, false)
	}
	defer w.forget(m.AssignmentID)
	eff, err := w.failJob(ctx, job, m.AssignmentID, failure(m))
	w.log.Info("job failed", "job", job, "kind", m.Kind, "error", m.Error)
	w.srv.Apply(ctx, eff)
	w.countFailure(m, draining)
	w.srv.counters.JobsFailed.Add(1) // last: whoever reads it sees the report's whole effect
	return ignoreStale(err, job)
}

// applyResponse handles AssignJobResponse: a decline puts the job back without using an
// attempt (gradient-server §6.1).
func (w *worker) applyResponse(ctx context.Context, m *wire.AssignJobResponse) error {
	id, job, ok := w.openAssignment(m.JobID)
	if !ok || m.Accepted {
		return nil
	}
	w.forget(id)
	w.srv.counters.JobsDeclined.Add(1)
	w.log.Info("worker declined a job", "job", job, "reason", m.Reason.Value)
	eff, err := w.srv.cfg.Store.DeclineAssignment(ctx, id)
	w.srv.Apply(ctx, eff)
	return ignoreStale(err, job)
}

func (w *worker) applyLog(ctx context.Context, m *wire.LogChunk) error {
	id, job, ok := w.openAssignment(m.JobID)
	if !ok || job.Kind != store.JobBuild {
		return w.stale(m.JobID, "")
	}
	at, err := w.srv.cfg.Store.AppendBuildLogChunk(ctx, id, m.Data)
	if errors.Is(err, store.ErrLogLimit) {
		w.srv.counters.LogBytesDropped.Add(uint64(len(m.Data)))
		return nil
	}
	if err == nil && at.AttemptID != "" { // stored: on to the followers (gradient-server §16)
		w.srv.logs.Publish(at.BuildID, loghub.Chunk{Attempt: at.AttemptID, Offset: at.Offset, Data: m.Data})
	}
	return ignoreStale(err, job)
}

var messageLevels = map[wire.EvalMessageLevel]store.MessageLevel{wire.EvalMessageLevelError: store.LevelError,
	wire.EvalMessageLevelWarning: store.LevelWarning, wire.EvalMessageLevelNotice: store.LevelNotice}

func (w *worker) applyEvalMessage(ctx context.Context, m *wire.EvalMessage) error {
	_, job, ok := w.openAssignment(m.JobID)
	if !ok || job.Kind != store.JobEval {
		return w.stale(m.JobID, "")
	}
	level, known := messageLevels[m.Level]
	if !known {
		level = store.LevelNotice
	}
	return w.srv.cfg.Store.AddEvaluationMessages(ctx, job.ID, []store.Message{{Level: level, Source: m.Source, Text: m.Message}})
}

// answerKnown answers QueryKnownDerivations after the EvalResults before it were applied; a
// store error answers an empty list, which only costs the worker a longer walk.
func (w *worker) answerKnown(ctx context.Context, m *wire.QueryKnownDerivations) error {
	known, err := w.srv.cfg.Store.KnownDerivations(ctx, m.DrvPaths)
	if err != nil {
		w.log.Warn("answering known derivations with none", "err", err)
		known = nil
	}
	return w.send(ctx, &wire.KnownDerivations{QueryID: m.QueryID, Known: known})
}

func (w *worker) applyCapabilities(ctx context.Context, m *wire.WorkerCapabilities) error {
	w.mu.Lock()
	w.caps = m
	w.mu.Unlock()
	w.srv.Kick()
	return w.srv.cfg.Store.SetWorkerCapabilities(ctx, w.id, capabilitiesJSON(m))
}

// rejectReport handles a report that fails validation: one bad report costs one job, not
// the session (gradient-server §6.1). The job fails Transient, so it is retried within its
// attempt budget, possibly on another worker; a worker still running it is told with
// AbortJob, and the assignment is forgotten so the job's later reports are dropped as
// stale. The session goes on serving its other jobs: only an undecodable frame ends it.
func (w *worker) rejectReport(ctx context.Context, job store.JobRef, assignmentID string, cause error, running bool) error {
	reason := truncateReason(cause.Error())
	w.srv.counters.ReportsInvalid.Add(1)
	w.log.Warn("invalid report: failing its job", "job", job, "assignment", assignmentID, "err", reason)
	w.forget(assignmentID)
	f := store.BuildFailure{Kind: store.FailTransient, Reason: "the worker sent an invalid report: " + reason}
	eff, err := w.failJob(ctx, job, assignmentID, f)
	w.srv.Apply(ctx, eff)
	if running {
		w.abortJob(ctx, job, "invalid report: "+reason)
	}
	return ignoreStale(err, job)
}

// failJob fails an assignment with the store call of its job's kind.
func (w *worker) failJob(ctx context.Context, job store.JobRef, assignmentID string, f store.BuildFailure) (store.Effects, error) {
	if job.Kind == store.JobBuild {
		return w.srv.cfg.Store.FailBuild(ctx, assignmentID, f)
	}
	return w.srv.cfg.Store.FailEvaluationJob(ctx, assignmentID, f)
}

func (w *worker) abortJob(ctx context.Context, job store.JobRef, reason string) {
	if err := w.send(ctx, &wire.AbortJob{JobID: job.String(), Reason: reason}); err != nil {
		w.log.Warn("sending AbortJob", "job", job, "err", err)
		return
	}
	w.srv.counters.JobsAborted.Add(1)
}

// malformed answers a frame that does not decode with Error 400 "malformed message" and
// closes the session (gradient-protocol §1.4): the one bad frame that costs the session,
// since nothing in it can be trusted to name a job. Other read errors (the socket went)
// pass through.
func (w *worker) malformed(err error) {
	if handshake.Malformed(w.conn, err) {
		w.srv.counters.FramesMalformed.Add(1)
		w.srv.hostile.Warn("undecodable frame: answered Error 400 and closed the session",
			"worker", w.id, "remote", w.remote, "err", err)
	}
}

// ignoreStale treats a report the store finds closed (aborted meanwhile, recovered) as
// handled: the worker's view lagged the server's.
func ignoreStale(err error, job store.JobRef) error {
	if errors.Is(err, store.ErrStaleAssignment) || errors.Is(err, store.ErrNoAttempt) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", job, err)
	}
	return nil
}
