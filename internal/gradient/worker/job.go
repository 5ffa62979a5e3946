package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// job is one accepted assignment.
type job struct {
	id         string
	kind       wire.JobKind
	assignment atomic.Pointer[string] // a re-sent AssignJob replaces it (gradient-protocol §3.2)
	cancel     context.CancelCauseFunc
}

func (j *job) assignmentID() string { return *j.assignment.Load() }

// assign accepts or declines an AssignJob (gradient-server §6.1). A Credential belongs to
// the AssignJob right after it and to no other, so it is taken first, whatever the answer: a
// declined job's key must not reach the next job (gradient-server §13.4).
func (s *sess) assign(m *wire.AssignJob) {
	credential := s.credential
	s.credential = nil
	if j, ok := s.jobs[m.JobID]; ok {
		clear(credential)
		j.assignment.Store(&m.AssignmentID)
		_ = s.send(&wire.AssignJobResponse{JobID: m.JobID, Accepted: true})
		return
	}
	kind, ok := jobKind(m.Job)
	if reason := s.declineReason(kind, ok); reason != "" {
		clear(credential)
		s.log.Info("worker: declining a job", "job", m.JobID, "reason", reason)
		_ = s.send(&wire.AssignJobResponse{JobID: m.JobID, Reason: wire.Some(reason)})
		return
	}
	ctx, cancel := context.WithCancelCause(s.ctx)
	j := &job{id: m.JobID, kind: kind, cancel: cancel}
	j.assignment.Store(&m.AssignmentID)
	s.jobs[j.id] = j
	s.running[kind]++
	if err := s.send(&wire.AssignJobResponse{JobID: m.JobID, Accepted: true}); err != nil {
		s.log.Warn("worker: cannot accept a job", "job", m.JobID, "err", err)
	}
	s.log.Info("worker: job accepted", "job", j.id, "kind", kind, "assignment", m.AssignmentID)
	go s.runJob(ctx, j, m.Job, credential)
}

func jobKind(j wire.Job) (wire.JobKind, bool) {
	switch j.(type) {
	case *wire.FlakeJob:
		return wire.JobKindFlake, true
	case *wire.BuildJob:
		return wire.JobKindBuild, true
	}
	return 0, false
}

// declineReason is why a job cannot be taken, or "".
func (s *sess) declineReason(kind wire.JobKind, known bool) string {
	switch {
	case !known:
		return "unsupported job type"
	case s.draining:
		return "worker is draining"
	case kind == wire.JobKindBuild && !s.caps.Build, kind == wire.JobKindFlake && !s.caps.Fetch && !s.caps.Eval:
		return "capability not negotiated"
	case s.free(kind) <= 0:
		return fmt.Sprintf("at capacity (%d/%d)", s.running[kind], s.limits[kind])
	}
	return ""
}

// jobFinished frees the job's slot and asks for another job of its kind.
func (s *sess) jobFinished(j *job) {
	if s.jobs[j.id] != j {
		return
	}
	delete(s.jobs, j.id)
	s.running[j.kind]--
	if !s.draining {
		_ = s.send(&wire.RequestJob{Kind: j.kind})
	}
}

// jobError is a job failure with the kind to report.
type jobError struct {
	kind    wire.BuildFailureKind
	missing []string
	metrics wire.Option[wire.BuildMetrics]
	err     error
}

func (e *jobError) Error() string { return e.err.Error() }
func (e *jobError) Unwrap() error { return e.err }

func failed(kind wire.BuildFailureKind, err error) error { return &jobError{kind: kind, err: err} }

// run is one job's execution context: its identity, spans and scratch space.
type run struct {
	s          *sess
	j          *job
	started    time.Time
	dir        string // scratch directory, removed at the end
	roots      *nixexec.Roots
	credential []byte

	mu    sync.Mutex
	spans []wire.JobPhaseSpan
}

// runJob executes a job and reports its end: JobCompleted (on the bulk lane, behind the
// job's log and upload bytes) or JobFailed with the kind; nothing when the session was lost.
func (s *sess) runJob(ctx context.Context, j *job, spec wire.Job, credential []byte) {
	r := &run{s: s, j: j, started: time.Now(), credential: credential,
		dir: filepath.Join(s.w.cfg.BaseDir, "jobs", sanitize(j.id+"-"+j.assignmentID()))}
	err := r.setup()
	if err == nil {
		switch spec := spec.(type) {
		case *wire.FlakeJob:
			err = r.flake(ctx, spec)
		case *wire.BuildJob:
			err = r.build(ctx, spec)
		}
	}
	r.teardown()
	r.report(ctx, err)
	select {
	case s.finished <- j:
	case <-s.over:
	}
}

func (r *run) setup() error {
	_ = os.RemoveAll(r.dir) // a leftover of an earlier attempt
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return failed(wire.BuildFailureKindTransient, fmt.Errorf("job directory: %w", err))
	}
	roots, err := r.s.w.nix.NewRoots(filepath.Base(r.dir))
	if err != nil {
		return failed(wire.BuildFailureKindTransient, err)
	}
	r.roots = roots
	return nil
}

func (r *run) teardown() {
	clear(r.credential)
	if r.roots != nil {
		if err := r.roots.Release(); err != nil {
			r.s.log.Warn("worker: releasing GC roots", "job", r.j.id, "err", err)
		}
	}
	if err := os.RemoveAll(r.dir); err != nil {
		r.s.log.Warn("worker: removing the job directory", "job", r.j.id, "err", err)
	}
}

func (r *run) report(ctx context.Context, err error) {
	elapsed := uint64(time.Since(r.started).Milliseconds())
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, errLost):
		return
	case err == nil && cause == nil:
		_ = r.s.send(&wire.JobCompleted{JobID: r.j.id, AssignmentID: r.j.assignmentID(), Spans: r.allSpans(), ElapsedMs: elapsed})
		r.s.log.Info("worker: job completed", "job", r.j.id, "elapsed_ms", elapsed)
		return
	}
	f := &wire.JobFailed{JobID: r.j.id, AssignmentID: r.j.assignmentID(), Spans: r.allSpans(), ElapsedMs: elapsed,
		Kind: wire.BuildFailureKindTransient}
	var je *jobError
	switch {
	case errors.Is(cause, errAborted):
		f.Kind, f.Error = wire.BuildFailureKindAborted, cause.Error()
	case errors.Is(cause, errCanceled):
		f.Kind, f.Error = wire.BuildFailureKindCanceled, cause.Error()
	case r.setupFailure(err, f):
	case errors.As(err, &je):
		f.Kind, f.Error, f.MissingPaths, f.Metrics = je.kind, je.Error(), je.missing, je.metrics
	default:
		f.Error = err.Error()
	}
	r.s.log.Info("worker: job failed", "job", r.j.id, "kind", f.Kind, "error", f.Error)
	_ = r.s.send(f)
}

// setupFailure reports a failure that comes from this machine's Nix set-up as the worker's,
// not the job's: Canceled, which the server re-queues without spending an attempt and counts
// against the worker (gradient-server §6.4.1), with the problem and its fix as the error. The
// worker probes again, and offers what works.
func (r *run) setupFailure(err error, f *wire.JobFailed) bool {
	p, ok := nixexec.Environmental(err)
	if !ok {
		return false
	}
	f.Kind, f.Error = wire.BuildFailureKindCanceled, SetupFailurePrefix+p.Error()
	r.s.w.health.setupFailed(p)
	return true
}

// SetupFailurePrefix starts the error of a job the worker gave back for its own set-up.
const SetupFailurePrefix = "worker set-up: "

// update sends a JobUpdate echoing the current assignment.
func (r *run) update(u wire.JobUpdateKind) error {
	return r.s.send(&wire.JobUpdate{JobID: r.j.id, AssignmentID: r.j.assignmentID(), Update: u})
}

// phase starts a span; the returned func ends it with the paths and bytes it moved.
func (r *run) phase(p wire.JobPhase) func(paths int, bytes uint64) {
	start := time.Since(r.started)
	return func(paths int, bytes uint64) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.spans = append(r.spans, wire.JobPhaseSpan{Phase: p, StartMs: uint64(start.Milliseconds()),
			EndMs: uint64(time.Since(r.started).Milliseconds()), Paths: uint32(paths), Bytes: bytes})
	}
}

func (r *run) allSpans() []wire.JobPhaseSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]wire.JobPhaseSpan(nil), r.spans...)
}

// sanitize keeps a job ID usable as one path element.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || string(b) == "." || string(b) == ".." {
		return "_"
	}
	return string(b)
}
